"""A rule preview is the live search: its "without" page is what ``POST /search`` answers now, and its
"with" page what it answers once the rule is saved, with hybrid retrieval and a learned ranker present.

Issue 27: the preview used to build its own pipeline without hybrid, ranker, fallback or deadline, so
for "running shoes" on fashion its "without" column differed from live search and it reported
``hybrid: None`` where live search said ``used``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import lightgbm
import numpy as np
import pytest
from tests.conftest import require

from aisle.catalog.store import CatalogStore
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants, tenant_scope
from aisle.search.engine import SearchEngine
from aisle.search.indexes import IndexRegistry
from aisle.search.model import FilterSpec, SearchResult
from aisle.search.query import SearchQuery
from aisle.search.ranking.features import FEATURES
from aisle.search.ranking.store import RankerRecord, RankerStore
from aisle.search.rules.book import RuleBooks
from aisle.search.rules.model import Rule, RuleBody
from aisle.search.rules.store import RuleStore
from aisle.vectors.build import product_texts, text_recipe
from aisle.vectors.search import VectorSearch
from aisle.vectors.store import VectorStore
from aisle.vectors.table import content_hash, table_dir, write_table
from aisle.vectors.text_encoder import EncoderUnavailable, TextEncoder

EMBEDDED = 600
"""Products per tenant given a real MiniLM vector (the rest have none, which hybrid retrieval allows):
enough for the nearest-neighbour leg to add products, a few seconds to embed."""

QUERIES: dict[str, list[tuple[str, dict[str, Any]]]] = {  # text, and the rest of the SearchQuery
    "fashion": [
        ("running shoes", {}),
        ("running shoes", {"offset": 20, "facets": ["brand", "color"]}),
        ("red nike shoes", {"size": 10}),
        ("timepiece for my wrist", {}),
        ("blue jeans for men", {"filters": [FilterSpec(field="gender", value="Men")]}),
        ("watch", {"user_group": "vip"}),
    ],
    "homedepot": [
        ("aluminum edging", {}),
        ("cordless drill battery", {"size": 30}),
        ("rain barrel", {"facets": []}),
        ("deck screws", {"offset": 10, "size": 10}),
    ],
}


def _tiny_ranker() -> str:
    """A LightGBM lambdarank model over the ranker's features (random, so it reorders visibly)."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=(200, len(FEATURES)))
    data = lightgbm.Dataset(x, (x[:, 0] > 0).astype(int), group=[20] * 10)
    params = {"objective": "lambdarank", "verbose": -1, "min_data_in_leaf": 5, "num_threads": 1}
    return lightgbm.train(params, data, 5).model_to_string()


def _embed_some(tenants: Tenants, tenant: str, vectors_dir: Path, encoder: TextEncoder) -> None:
    """A text vector table of the tenant's first :data:`EMBEDDED` products (real MiniLM)."""
    attributes = tenants.config(tenant).attributes
    catalog = CatalogStore(tenants.scope(tenant)).load()
    texts = product_texts(catalog, attributes)[:EMBEDDED]
    ids = [str(i) for i in catalog.products["id"].to_list()[:EMBEDDED]]
    hashes = np.asarray([content_hash(t.encode()) for t in texts], dtype=np.uint64)
    dest = table_dir(vectors_dir, tenant, "text", catalog.version, text_recipe(attributes))
    write_table(dest, catalog.version, ids, encoder.encode(texts), hashes)


@pytest.fixture(scope="module")
def engine(demo_env: Any, tmp_path_factory: pytest.TempPathFactory) -> SearchEngine:
    """The demo tenants served as the search service serves them, with text vectors and a ranker
    each; rules and rankers in a bucket of this module's own (the demo bucket stays untouched)."""
    tenants = Tenants(open_blob_store(demo_env.storage_url), ttl=0)
    own = tmp_path_factory.mktemp("preview-live")
    try:
        encoder = TextEncoder.load(threads=2)
    except EncoderUnavailable as exc:
        require(False, f"no MiniLM model: {exc}")
    for tenant in QUERIES:
        _embed_some(tenants, tenant, own / "vectors", encoder)
    side = open_blob_store(f"file://{own / 'bucket'}")
    rankers = RankerStore(side)
    record = RankerRecord(version=0, features=list(FEATURES), queries=10, candidates=200)
    for tenant in QUERIES:
        rankers.save(tenant, _tiny_ranker(), record)
    # a deadline no slow machine reaches: live search and preview then take the same optional stages
    # (the deadline itself is the engine's, shared by both; a preview cannot set its own)
    return SearchEngine(
        tenants,
        IndexRegistry(tenants, demo_env.data_dir),
        VectorSearch(VectorStore(own / "vectors")),
        rules=RuleBooks(side),
        rankers=rankers,
        budget_s=30.0,
    )


def _page(result: SearchResult) -> tuple[list[str], int, str | None, list[str]]:
    graph = result.query_graph
    stages = [str(t["stage"]) for t in graph.stages_tried]
    return [p["id"] for p in result.products], result.total, graph.hybrid, stages


def _rule(rule_id: str, **fields: Any) -> Rule:
    now = datetime.now(UTC)
    body = RuleBody.model_validate({"name": rule_id, **fields})
    return Rule(**body.model_dump(), id=rule_id, version=1, createdAt=now, updatedAt=now)


@pytest.mark.parametrize("tenant", sorted(QUERIES))
def test_the_page_without_the_rule_is_the_live_page(engine: SearchEngine, tenant: str) -> None:
    pin = {"type": "pin", "items": [{"productId": "no-such-product", "position": 1}]}
    rule = _rule("pin-first", conditions={"query": {"match": "any"}}, actions=[pin])
    used = reranked = 0
    for query, options in QUERIES[tenant]:
        asked = SearchQuery(query, **options)
        live = engine.search(tenant, asked)
        preview = engine.preview(tenant, asked, rule)
        assert _page(preview.without_rule) == _page(live), (tenant, query, options)
        assert live.products, (tenant, query)  # a page to compare, not two empty ones
        used += live.query_graph.hybrid == "used"
        reranked += any(str(t["stage"]).startswith("rerank") for t in live.query_graph.stages_tried)
    # the vectors and the ranker were there and ran: the comparison covers hybrid and reranking
    assert used >= len(QUERIES[tenant]) // 2, f"hybrid retrieval ran on {used} {tenant} searches"
    assert reranked >= len(QUERIES[tenant]) // 2, f"the ranker ran on {reranked} {tenant} searches"


@pytest.mark.parametrize(
    ("tenant", "query", "fields"),
    [
        (
            "fashion",
            "running shoes",
            {
                "conditions": {"query": {"match": "contains", "value": "shoes"}},
                "actions": [
                    {"type": "boost", "condition": [{"field": "brand", "value": "Nike"}], "weight": 40}
                ],
            },
        ),
        (
            "homedepot",
            "aluminum edging",
            {
                "conditions": {"query": {"match": "exact", "value": "aluminum edging"}},
                "actions": [
                    {"type": "pin", "items": [{"productId": "100001", "position": 2}]},
                ],
            },
        ),
    ],
)
def test_the_page_with_the_rule_is_live_search_once_the_rule_is_saved(
    engine: SearchEngine, tenant: str, query: str, fields: dict[str, Any]
) -> None:
    rule_id = f"saved-{tenant}"
    preview = engine.preview(tenant, SearchQuery(query), _rule(rule_id, **fields))
    assert preview.changes["fired"]
    assert _page(preview.with_rule)[0] != _page(preview.without_rule)[0]  # the rule changes the page
    _save(engine, tenant, rule_id, fields)
    live = engine.search(tenant, SearchQuery(query))
    assert _page(preview.with_rule) == _page(live)
    assert preview.with_rule.query_graph.rules == live.query_graph.rules


def _rules(engine: SearchEngine, tenant: str) -> RuleStore:
    assert engine.rules is not None
    return RuleStore(tenant_scope(engine.rules.store, tenant))


def _save(engine: SearchEngine, tenant: str, rule_id: str, fields: dict[str, Any]) -> None:
    """The rule saved as the rules service saves it (with the previewed rule's id and name)."""
    _rules(engine, tenant).create(RuleBody.model_validate({"name": rule_id, **fields}), rule_id)
