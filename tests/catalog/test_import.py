"""Catalog import: formats, column mapping, HTML stripping, bad rows by line, all-or-nothing versions."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import polars as pl
import pytest

from aisle.catalog.datasets.common import tenant_files
from aisle.catalog.importer import import_catalog
from aisle.catalog.store import CatalogNotFound, CatalogStore
from aisle.core.errors import BadRequest
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import Attribute, AttributeConfiguration, GlobalConfiguration

ROWS = [
    {
        "sku": "1",
        "name": "Red <b>Running</b> Shoe",
        "maker": "Nike",
        "cost": "49.5",
        "desc": "<p>Light &amp; fast</p>",
    },
    {"sku": "2", "name": "Blue Shirt", "maker": "Puma", "cost": "oops", "desc": None},
    {"sku": "", "name": "No id", "maker": "X", "cost": "1", "desc": None},
    {"sku": "3", "name": "Green Cap", "maker": "Puma", "cost": "9", "desc": None},
    {"sku": "1", "name": "Duplicate", "maker": "Nike", "cost": "1", "desc": None},
]


@pytest.fixture
def tenants(blob_store: BlobStore) -> Tenants:
    attrs = AttributeConfiguration(
        id_source="sku",
        attributes=[
            Attribute(name="title", type="text", source="name", role="title", searchable=True, html=True),
            Attribute(name="brand", source="maker", role="brand", filterable=True, facetable=True),
            Attribute(
                name="price", type="number", source="cost", role="price", filterable=True, sortable=True
            ),
            Attribute(name="description", type="text", source="desc", html=True),
        ],
    )
    t = Tenants(blob_store, ttl=0)
    t.write_config("shop", tenant_files(attrs, GlobalConfiguration()))
    return t


def write_jsonl(path: Path, rows: list[dict], bad_line: bool = True) -> Path:
    lines = [json.dumps(r) for r in rows]
    if bad_line:
        lines.insert(2, "{broken json")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_jsonl_import_maps_columns_strips_html_and_reports_bad_rows(tenants: Tenants, tmp_path: Path) -> None:
    report, catalog = import_catalog(tenants, "shop", write_jsonl(tmp_path / "c.jsonl", ROWS))
    products = {r["id"]: r for r in catalog.products.to_dicts()}
    assert sorted(products) == ["1", "3"]
    assert products["1"]["title"] == "Red Running Shoe"
    assert products["1"]["description"] == "Light & fast"
    assert products["1"]["price"] == 49.5
    reasons = {b.line: b.reason for b in report.bad_rows}
    assert "not a number" in reasons[2]  # "oops" price
    assert "not valid JSON" in reasons[3]  # the inserted broken line
    assert reasons[4] == "missing id"
    assert reasons[6].startswith("duplicate id")
    assert len(report.bad_rows) == 4


def test_csv_gz_and_parquet_give_the_same_catalog(tenants: Tenants, tmp_path: Path) -> None:
    good = [r for r in ROWS if r["sku"] in ("1", "3")][:2]
    frame = pl.DataFrame(good)
    csv_path = tmp_path / "c.csv.gz"
    csv_path.write_bytes(gzip.compress(frame.write_csv().encode()))
    frame.write_parquet(tmp_path / "c.parquet")
    _, from_csv = import_catalog(tenants, "shop", csv_path)
    _, from_parquet = import_catalog(tenants, "shop", tmp_path / "c.parquet")
    assert from_csv.products.sort("id").to_dicts() == from_parquet.products.sort("id").to_dicts()


def test_failed_import_keeps_the_previous_version(tenants: Tenants, tmp_path: Path) -> None:
    _, first = import_catalog(tenants, "shop", write_jsonl(tmp_path / "ok.jsonl", ROWS, bad_line=False))
    (tmp_path / "bad.jsonl").write_text('{"name": "no sku column"}\n')
    with pytest.raises(BadRequest) as err:
        import_catalog(tenants, "shop", tmp_path / "bad.jsonl")
    assert err.value.code == "catalog_id_missing"
    assert CatalogStore(tenants.scope("shop")).current_version() == first.version


def test_all_rows_bad_is_an_error(tenants: Tenants, tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text('{"sku": ""}\nnot json\n')
    with pytest.raises(BadRequest) as err:
        import_catalog(tenants, "shop", tmp_path / "bad.jsonl")
    assert err.value.code == "catalog_empty"
    with pytest.raises(CatalogNotFound):
        CatalogStore(tenants.scope("shop")).load()


def test_unknown_format_and_missing_file(tenants: Tenants, tmp_path: Path) -> None:
    (tmp_path / "c.xml").write_text("<x/>")
    with pytest.raises(BadRequest, match="cannot tell the format"):
        import_catalog(tenants, "shop", tmp_path / "c.xml")
    with pytest.raises(BadRequest, match="does not exist"):
        import_catalog(tenants, "shop", tmp_path / "absent.jsonl")


def test_real_fashion_catalog_imports_with_nan_descriptions(tenants: Tenants, shared_data: Path) -> None:
    from aisle.catalog.datasets import fashion

    t = Tenants(tenants.store, ttl=0)
    t.write_config("fashion", fashion.configs())
    report, catalog = import_catalog(t, "fashion", shared_data / "fashion" / "products.jsonl.gz")
    assert report.imported == 44441 and not report.bad_rows
    assert catalog.products["category"][0] == "Apparel > Bottomwear > Skirts"
    assert not catalog.products["description"].drop_nulls().str.contains("<p>").any()
