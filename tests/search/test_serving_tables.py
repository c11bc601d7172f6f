"""Serving tables beside an index (issue 42): derived once per host, mapped by every worker, equal to
what a worker would derive from the catalog itself."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from aisle.catalog.datasets.common import tenant_files
from aisle.catalog.importer import import_catalog
from aisle.catalog.store import CatalogStore
from aisle.core.mapped import MappedStrings
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import Attribute, AttributeConfiguration, GlobalConfiguration
from aisle.search.attributes import build_dictionary
from aisle.search.index import serving_tables
from aisle.search.index.reader import TenantIndex
from aisle.search.index.serving_tables import TABLES_DIR, memory_tables
from aisle.search.indexes import IndexRegistry

SHOP = """id,title,brand,price,category
d1,Cordless Drill 18V,Acme,99.5,Tools>Power
d2,Hand Saw – Ünïcode ✓,ACME,,Tools>Hand
d3,Claw Hammer,Bolt,12,Tools>Hand
d4,Drill Bit Set,acme,25,Tools>Power>Bits
"""
ATTRIBUTES = AttributeConfiguration(
    attributes=[
        Attribute(name="title", type="text", role="title", searchable=True),
        Attribute(name="brand", role="brand", searchable=True, filterable=True, facetable=True),
        Attribute(name="price", type="number", role="price"),
        Attribute(name="category", type="category_path", role="category", searchable=True, filterable=True),
    ]
)


@pytest.fixture
def shop(blob_store: BlobStore, tmp_path: Path) -> Tenants:
    tenants = Tenants(blob_store, ttl=0)
    tenants.write_config("shop", tenant_files(ATTRIBUTES, GlobalConfiguration()))
    (tmp_path / "shop.csv").write_text(SHOP)
    import_catalog(tenants, "shop", tmp_path / "shop.csv")
    return tenants


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every catalog version read from the bucket, from now on."""
    reads: list[str] = []
    real = CatalogStore.load

    def load(self: CatalogStore, version: str | None = None):  # type: ignore[no-untyped-def]
        reads.append(str(version))
        return real(self, version)

    monkeypatch.setattr(CatalogStore, "load", load)
    return reads


def _same(index: TenantIndex, products: pl.DataFrame) -> None:
    want = memory_tables(products, ATTRIBUTES)
    assert list(index.ids) == list(want.ids) == products["id"].to_list()
    assert {pid: index.ord_by_id[pid] for pid in index.ids} == dict(want.ord_by_id)
    assert index.ord_by_id.get("nope") is None
    assert index.keyword_values == want.keyword_values
    assert index.keyword_values["brand"]["acme"] == ["ACME", "Acme", "acme"]
    assert "Tools>Power" in index.keyword_values["category"]["tools>power"]  # an ancestor path
    assert index.price_ranges == want.price_ranges
    assert index.speller.vocabulary == want.vocabulary and index.speller.known("drill")
    assert [s.to_list() for s in index.searchable] == [s.to_list() for s in want.searchable]
    assert index.dictionary.entries == build_dictionary(ATTRIBUTES, want.value_counts, index.analyze).entries
    assert index.dictionary.entries


def test_workers_map_the_tables_the_first_one_wrote(
    shop: Tenants, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = _reads(monkeypatch)
    first = IndexRegistry(shop, tmp_path / "data").get("shop")
    assert len(reads) == 2  # one read to build the index, one for its rows and tables
    reads.clear()
    second = IndexRegistry(shop, tmp_path / "data").get("shop")
    assert reads == []  # the second worker never reads the catalog: it maps the files
    assert isinstance(second.ids, MappedStrings)
    products = CatalogStore(shop.scope("shop")).load(second.version).products
    for index in (first, second):
        _same(index, products)
    hits = second.searcher.search(second.index.parse_query("drill", ["s_title"]), 10).hits
    assert sorted(second.ids[o] for o in second.ords(hits)) == ["d1", "d4"]


def test_unwritable_tables_are_derived_in_memory(
    shop: Tenants, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(serving_tables, "write_tables", refuse)
    index = IndexRegistry(shop, tmp_path / "data").get("shop")
    assert not any((p / TABLES_DIR).exists() for p in (tmp_path / "data" / "indexes" / "shop").iterdir())
    assert isinstance(index.ord_by_id, dict)
    _same(index, CatalogStore(shop.scope("shop")).load(index.version).products)
