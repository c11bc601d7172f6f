"""Hybrid retrieval in the search pipeline: fusion, expansion, filters, per-tenant switch."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from tests.support.vectors import MiniTenant, mini_fashion

from aisle.core.storage import open_blob_store
from aisle.core.tenancy import TenantConfig, Tenants
from aisle.core.tenant_config import HybridConfig
from aisle.search.index.reader import TenantIndex
from aisle.search.indexes import IndexRegistry
from aisle.search.model import FilterSpec
from aisle.search.pipeline import SearchPipeline, default_stages
from aisle.search.query import SearchQuery
from aisle.search.stages.hybrid import Hybrid
from aisle.vectors.search import VectorSearch
from aisle.vectors.store import VectorStore


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> MiniTenant:
    return mini_fashion(tmp_path_factory.getbasetemp() / "vectors-mini", shared_data)


@pytest.fixture(scope="module")
def setup(mini: MiniTenant) -> tuple[TenantIndex, TenantConfig, SearchPipeline, SearchPipeline]:
    tenants = Tenants(open_blob_store(mini.storage_url), ttl=0)
    index = IndexRegistry(tenants, mini.data_dir).get("fashion")
    vectors = VectorSearch(VectorStore(mini.data_dir))
    hybrid = SearchPipeline(default_stages(vectors=vectors), budget_s=5.0)
    return index, tenants.config("fashion"), hybrid, SearchPipeline(budget_s=5.0)


def _with(config: TenantConfig, **hybrid: object) -> TenantConfig:
    g = config.global_.model_copy(update={"hybrid": HybridConfig(**hybrid)})  # type: ignore[arg-type]
    return dataclasses.replace(config, global_=g)


def test_the_default_pipeline_holds_an_unbound_hybrid_stage(setup) -> None:  # type: ignore[no-untyped-def]
    index, config, _, lexical = setup
    assert any(isinstance(s, Hybrid) and s.vectors is None for s in default_stages())
    graph = lexical.search(index, config, SearchQuery("watch", size=5)).query_graph
    assert not any(str(t["stage"]).startswith("hybrid") for t in graph.stages_tried)


def test_words_the_catalog_lacks_still_find_products(setup) -> None:  # type: ignore[no-untyped-def]
    index, config, hybrid, lexical = setup
    plain = lexical.search(index, config, SearchQuery("timepiece for my wrist", size=5))
    fused = hybrid.search(index, _with(config, method="rrf"), SearchQuery("timepiece for my wrist", size=5))
    assert fused.total > plain.total
    types = [index.rows[index.ord_by_id[p["id"]]]["article_type"] for p in fused.products]
    assert types[:3].count("Watches") >= 2
    assert fused.query_graph.stages_tried[-1]["stage"] == "hybrid-rrf"


def test_added_products_pass_the_request_filters(setup) -> None:  # type: ignore[no-untyped-def]
    index, config, hybrid, _ = setup
    women = [FilterSpec(field="gender", value="Women")]
    result = hybrid.search(
        index, _with(config, method="rrf"), SearchQuery("timepiece for my wrist", size=20, filters=women)
    )
    assert result.products
    assert all(index.rows[index.ord_by_id[p["id"]]]["gender"] == "Women" for p in result.products)


def test_strict_matches_are_reordered_not_extended(setup) -> None:  # type: ignore[no-untyped-def]
    index, config, hybrid, lexical = setup
    query = next(
        q
        for q in ("men", "women", "tshirts", "shirts", "watches", "casual", "shoes")
        if lexical.search(index, config, SearchQuery(q, size=0)).query_graph.stage == "strict"
    )
    plain = lexical.search(index, config, SearchQuery(query, size=100))
    fused = hybrid.search(index, config, SearchQuery(query, size=100))
    assert fused.query_graph.stages_tried[-1]["stage"] == "hybrid-blend"  # the default
    assert fused.total == plain.total
    assert {p["id"] for p in fused.products} == {p["id"] for p in plain.products}


@pytest.mark.parametrize("method", ["rrf", "blend"])
def test_both_fusion_methods_rank_relevant_products_first(setup, method: str) -> None:  # type: ignore[no-untyped-def]
    index, config, hybrid, _ = setup
    result = hybrid.search(index, _with(config, method=method), SearchQuery("timepiece for my wrist", size=3))
    types = [index.rows[index.ord_by_id[p["id"]]]["article_type"] for p in result.products]
    assert types.count("Watches") >= 2
    assert result.query_graph.stages_tried[-1]["stage"] == f"hybrid-{method}"


def test_switched_off_per_tenant_and_for_price_sorts(setup) -> None:  # type: ignore[no-untyped-def]
    index, config, hybrid, lexical = setup
    off = hybrid.search(index, _with(config, enabled=False), SearchQuery("timepiece for my wrist", size=5))
    plain = lexical.search(index, config, SearchQuery("timepiece for my wrist", size=5))
    assert [p["id"] for p in off.products] == [p["id"] for p in plain.products]
    by_price = hybrid.search(index, config, SearchQuery("timepiece for my wrist", size=5, sort="price_asc"))
    assert not any(str(t["stage"]).startswith("hybrid") for t in by_price.query_graph.stages_tried)


@pytest.mark.parametrize("neighbours", [0, 3, 40])
def test_the_nearest_neighbour_leg_looks_up_hybrid_neighbours(setup, neighbours: int) -> None:  # type: ignore[no-untyped-def]
    index, config, hybrid, lexical = setup
    query = SearchQuery("timepiece for my wrist", size=5)
    tuned = _with(config, method="rrf", neighbours=neighbours)  # RRF always searches the neighbours
    ctx = hybrid.run(index, tuned, query)
    assert ctx.graph is not None and ctx.graph.stage in tuned.global_.hybrid.expand_stages
    plain = lexical.search(index, config, query)
    found = ctx.retrieval.candidates
    if found is None:  # no word matched and no neighbour was looked up: nothing to fuse
        assert neighbours == 0 and plain.total == 0 and ctx.output.total == 0
        return
    lexical_ords = set(found.ords[: len(found.ords) - ctx.retrieval.vector_only].tolist())
    stage = next(s for s in hybrid.stages if isinstance(s, Hybrid))
    assert stage.vectors is not None
    table = stage.vectors.store.table("fashion")
    floor = ctx.graph.hybrid_floor  # no word matched: the query is embedded with MiniLM
    assert floor is not None and floor.encoder == ("minilm" if not lexical_ords else "static")
    query_vec = stage.vectors.encode_query(table, ctx.graph.normalized, floor.encoder)
    depth = neighbours if lexical_ords else max(neighbours, tuned.global_.hybrid.candidates)
    keys = table.ann.search(query_vec, depth).keys
    close = {
        table.ids[int(k)]
        for k in keys
        if float(table.ann.rows(np.asarray([k]))[0] @ query_vec) >= floor.floor
    }
    near = [table.ids[int(k)] for k in keys]
    expected = [
        index.ord_by_id[i]
        for i in near
        if i is not None and index.ord_by_id[i] not in lexical_ords and i in close
    ]
    assert floor.below == len(
        [i for i in near if i not in close]
    )  # the mini catalog: every one passes filters
    assert found.ords[len(lexical_ords) :].tolist() == expected
    assert ctx.output.total == plain.total + len(expected)
    if neighbours == 40:
        assert expected  # words the catalog lacks: the vector leg adds products
