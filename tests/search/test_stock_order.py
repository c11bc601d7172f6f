"""The stock rule at the engine's level (:mod:`aisle.search.stages.stock`): the tiers of bury and a
store boost, and a semantic search's nearest products hidden or buried by the tenant's policy, on an
index followed live (the stock of a product written after the build)."""

from __future__ import annotations

from pathlib import Path

import tantivy
from tests.support.product_shop import TENANT, attributes, shop

from aisle.catalog.datasets.common import tenant_files
from aisle.catalog.writer import CatalogWriter
from aisle.core.stock import StockConfig
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import GlobalConfiguration
from aisle.search.indexes import IndexRegistry
from aisle.search.query import SearchQuery
from aisle.search.semantic import vector_search_result
from aisle.search.stages.stock import tier_queries
from aisle.vectors.search import Neighbour


def setup(tmp_path: Path, stock: StockConfig) -> tuple[IndexRegistry, Tenants]:
    tenants = shop(open_blob_store(f"file://{tmp_path / 'bucket'}"), tmp_path)
    tenants.write_config(TENANT, tenant_files(attributes(), GlobalConfiguration(stock=stock)))
    writer = CatalogWriter(tenants)
    writer.patch(TENANT, "1", {"availability": "OUT_OF_STOCK"})
    writer.inventory(TENANT, "3", "north", {"availability": "IN_STOCK"})
    registry = IndexRegistry(tenants, tmp_path / "data", check_every=3600, live_dirs=[tmp_path / "live"])
    registry.get(TENANT)
    assert registry.follow(TENANT) == 2
    return registry, tenants


NEAREST = [Neighbour("1", 0.9), Neighbour("2", 0.8), Neighbour("3", 0.7)]


def semantic(registry: IndexRegistry, tenants: Tenants, **query: object) -> list[str]:
    result = vector_search_result(
        registry.get(TENANT),
        tenants.config(TENANT),
        SearchQuery("shoe", **query),
        NEAREST,  # type: ignore[arg-type]
    )
    assert result.total == len(result.products)
    return [p["id"] for p in result.products]


def test_a_semantic_search_hides_or_buries_what_is_out_of_stock(tmp_path: Path) -> None:
    registry, tenants = setup(tmp_path / "hide", StockConfig(policy="hide"))
    assert semantic(registry, tenants) == ["2", "3"]
    assert semantic(registry, tenants, store_id="north") == ["3"]
    registry, tenants = setup(tmp_path / "bury", StockConfig(policy="bury"))
    assert semantic(registry, tenants) == ["2", "3", "1"]
    assert semantic(registry, tenants, sort="price_desc") == ["2", "3", "1"]  # 1 is the dearest
    registry, tenants = setup(tmp_path / "boost", StockConfig(policy="bury", store="boost"))
    assert semantic(registry, tenants, store_id="north") == ["3", "2", "1"]
    registry, tenants = setup(tmp_path / "show", StockConfig())
    assert semantic(registry, tenants) == ["1", "2", "3"]


def test_tiers_are_tried_best_first_and_cover_every_product(tmp_path: Path) -> None:
    registry, _ = setup(tmp_path, StockConfig())
    index = registry.get(TENANT)
    store = tantivy.Query.term_query(index.schema, "stock_stores", "north")
    stock = tantivy.Query.term_query(index.schema, "stock_in", True)
    found = [
        sorted(index.ids[o] for o in index.ords(index.searcher.search(q, 10).hits))
        for q in tier_queries([(store, 2.0), (stock, 1.0)])
    ]
    assert found == [["3"], [], ["2"], ["1"]]  # store and in stock, store only, in stock only, neither
