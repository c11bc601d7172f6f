"""Compact catalog rows (issue 32, "memory per search worker"): :class:`ProductRows` gives back exactly
the dicts it was built from, and an index's rows are the ones the list of dicts held before: same keys,
key order, values and value types, for small catalogs and the demo catalogs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aisle.catalog.datasets.common import tenant_files
from aisle.catalog.importer import import_catalog
from aisle.catalog.store import CatalogStore
from aisle.core.storage import BlobStore, open_blob_store
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import Attribute, AttributeConfiguration, GlobalConfiguration
from aisle.search.index.reader import SPEC_FIELDS, TenantIndex
from aisle.search.index.rows import ProductRows
from aisle.search.indexes import IndexRegistry

VALUES = st.one_of(
    st.none(),
    st.text(max_size=300),  # any unicode, empty included
    st.floats(allow_nan=False),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.booleans(),
)


def _typed(row: dict[str, Any]) -> list[tuple[str, type, Any]]:
    return [(k, type(v), v) for k, v in row.items()]


@settings(max_examples=60, deadline=None)
@given(
    fields=st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True), min_size=1, max_size=8, unique=True),
    data=st.data(),
)
def test_rows_come_back_equal_in_order_and_type(fields: list[str], data: st.DataObject) -> None:
    rows = data.draw(st.lists(st.tuples(*[VALUES] * len(fields)), max_size=30))
    stored = ProductRows(fields, rows)
    expected = [dict(zip(fields, r, strict=True)) for r in rows]
    assert len(stored) == len(expected)
    assert [_typed(r) for r in stored] == [_typed(r) for r in expected]
    assert [_typed(stored[o]) for o in range(-len(rows), 0)] == [_typed(r) for r in expected]
    assert stored[1:-1:2] == expected[1:-1:2]
    for o, row in enumerate(expected):
        assert all(stored.value(o, k) == v for k, v in row.items())


def test_each_read_is_a_new_dict_a_caller_may_change() -> None:
    stored = ProductRows(["id", "tags"], [("a", "x"), ("b", None)])
    first = stored[0]
    first["id"] = "changed"
    first["score"] = 1.0
    assert stored[0] == {"id": "a", "tags": "x"} and stored[0] is not stored[0]


def test_out_of_range_rows_and_wrong_widths_raise() -> None:
    stored = ProductRows(["id"], [("a",), ("b",)])
    with pytest.raises(IndexError):
        stored[2]
    with pytest.raises(IndexError):
        stored[-3]
    with pytest.raises(KeyError):
        stored.value(0, "title")
    with pytest.raises(ValueError, match="row 1 has 2 values for 1 fields"):
        ProductRows(["id"], [("a",), ("b", "c")])
    assert list(ProductRows(["id"], [])) == []


def reference_rows(products: pl.DataFrame, config: AttributeConfiguration) -> list[dict[str, Any]]:
    """The rows as the index held them before issue 32: ``to_dicts`` plus the spec field names."""
    returned = ["id"] + [a.name for a in config.attributes if a.returned and a.name in products.columns]
    rows = products.select(returned).to_dicts()
    for attr in config.attributes:
        if attr.role in SPEC_FIELDS and attr.name != SPEC_FIELDS[attr.role] and attr.name in products.columns:
            for row, value in zip(rows, products[attr.name].to_list(), strict=True):
                row[SPEC_FIELDS[attr.role]] = value
    for row in rows:
        for alias in SPEC_FIELDS.values():
            row.setdefault(alias, None)
    return rows


def _same_rows(index: TenantIndex, products: pl.DataFrame, config: AttributeConfiguration) -> None:
    expected = reference_rows(products, config)
    assert len(index.rows) == len(expected)
    for o, row in enumerate(expected):
        assert _typed(index.rows[o]) == _typed(row), o
    assert list(index.product_ids()) == [row["id"] for row in expected]
    assert all(index.ord_by_id[row["id"]] == o for o, row in enumerate(expected))


SHOP = """id,name,maker,price,colour,qty,sale,title
d1,Cordless Drill 18V,Acme,99.5,Red,3,yes,a column the title alias replaces
d2,Hand Saw – Ünïcode ✓,Bolt,,Blue,,no,
d3,Hammer,,12,,7,,x
"""


def _shop(blob_store: BlobStore, tmp_path: Path, attributes: list[Attribute]) -> TenantIndex:
    """The ``SHOP`` catalog under ``attributes``, imported and opened; its rows checked against
    :func:`reference_rows` on the way."""
    tenants = Tenants(blob_store, ttl=0)
    config = AttributeConfiguration(attributes=attributes)
    tenants.write_config("shop", tenant_files(config, GlobalConfiguration()))
    (tmp_path / "shop.csv").write_text(SHOP)
    import_catalog(tenants, "shop", tmp_path / "shop.csv")
    index = IndexRegistry(tenants, tmp_path / "data").get("shop")
    _same_rows(index, CatalogStore(tenants.scope("shop")).load(index.version).products, config)
    return index


def test_spec_field_names_are_added_and_replace_in_place(blob_store: BlobStore, tmp_path: Path) -> None:
    attributes = [
        Attribute(name="name", type="text", role="title", searchable=True),
        Attribute(name="title"),  # a column named like a spec field: the alias takes its place
        Attribute(name="maker", role="brand", returned=False),
        Attribute(name="price", type="number", role="price"),
        Attribute(name="colour", role="color"),
        Attribute(name="qty", type="integer"),
        Attribute(name="sale", type="boolean"),
    ]
    index = _shop(blob_store, tmp_path, attributes)
    assert index.rows[:] == [
        {
            "id": "d1",
            "name": "Cordless Drill 18V",
            "title": "Cordless Drill 18V",
            "price": 99.5,
            "colour": "Red",
            "qty": 3,
            "sale": True,
            "brand": "Acme",
            "color": "Red",
        },
        {
            "id": "d2",
            "name": "Hand Saw – Ünïcode ✓",
            "title": "Hand Saw – Ünïcode ✓",
            "price": None,
            "colour": "Blue",
            "qty": None,
            "sale": False,
            "brand": "Bolt",
            "color": "Blue",
        },
        {
            "id": "d3",
            "name": "Hammer",
            "title": "Hammer",
            "price": 12.0,
            "colour": None,
            "qty": 7,
            "sale": None,
            "brand": None,
            "color": None,
        },
    ]
    order = ["id", "name", "title", "price", "colour", "qty", "sale", "brand", "color"]
    assert [list(r) for r in index.rows] == [order] * 3
    assert [type(index.rows[0][k]) for k in ("price", "qty", "sale")] == [float, int, bool]


def test_missing_roles_are_none(blob_store: BlobStore, tmp_path: Path) -> None:
    attributes = [Attribute(name="name", type="text", role="title", searchable=True)]
    index = _shop(blob_store, tmp_path, attributes)
    assert index.rows[2] == {
        "id": "d3",
        "name": "Hammer",
        "title": "Hammer",
        "price": None,
        "brand": None,
        "color": None,
    }
    assert list(index.rows[2]) == ["id", "name", "title", "price", "brand", "color"]


@pytest.mark.parametrize("tenant", ["fashion", "homedepot"])
def test_demo_catalog_rows_are_the_dicts_they_replace(demo_env: Any, tenant: str) -> None:
    tenants = Tenants(open_blob_store(demo_env.storage_url), ttl=0)
    index = IndexRegistry(tenants, demo_env.data_dir).get(tenant)
    catalog = CatalogStore(tenants.scope(tenant)).load(index.version)
    _same_rows(index, catalog.products, tenants.config(tenant).attributes)
