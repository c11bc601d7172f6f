"""Facet counts over retrieval's lean query equal those over its match query (issue 32): the lean query
drops only scoring parts, so the products counted, and every count, stay the same."""

from __future__ import annotations

from typing import Any

import pytest

from aisle.core.tenancy import Tenants
from aisle.search.indexes import IndexRegistry
from aisle.search.model import FilterSpec
from aisle.search.pipeline import SearchPipeline
from aisle.search.query import SearchQuery
from aisle.search.stages.facets import Facets

FACETS = ("brand", "color", "article_type", "price", "category", "gender")


@pytest.fixture(scope="module")
def fashion(demo_env: Any) -> tuple[Any, Any]:
    tenants = Tenants(demo_env.store, ttl=3600)
    return IndexRegistry(tenants, demo_env.data_dir).get("fashion"), tenants.config("fashion")


QUERIES = [
    ("red shirt", []),  # strict
    ("red nike running shoes", []),  # relaxed
    ("adidas men blue track pants", [FilterSpec(field="gender", value="Men")]),  # relaxed, filtered
    ("ucb women's young pigment print black t-shirt", []),  # relaxed or typo: many words
    ("classic polo men's combo pack of 2 dark blue army green t-shirt", []),  # typo: any one word
    ("nikke runing shoos", []),  # typo: misspelt words
    ("watch under 500", []),  # an extracted price phrase
    ("", [FilterSpec(field="gender", value="Women")]),  # browse
    ("blue jeans for men", [FilterSpec(field="brand", value=["Levis", "Wrangler"])]),
    ("black leather belt", [FilterSpec(field="price", value={"gte": 200, "lte": 2000})]),
]


def test_lean_and_full_match_queries_count_the_same(fashion: tuple[Any, Any]) -> None:
    index, config = fashion
    pipeline = SearchPipeline(budget_s=60)
    stages, leaner = set(), 0
    for text, filters in QUERIES:
        ctx = pipeline.run(index, config, SearchQuery(text, size=20, facets=FACETS, filters=filters))
        assert ctx.graph is not None and ctx.retrieval.lean_match is not None
        stages.add(ctx.graph.stage)
        full, lean = ctx.retrieval.lean_match
        assert full is ctx.retrieval.match_query
        leaner += lean is not full
        counted = dict(ctx.output.facet_counts)  # over the lean query
        ctx.retrieval.lean_match = None  # over the match query, as before issue 32
        assert Facets().run(ctx).output.facet_counts == counted, text
        assert sum(c for _, c in counted["gender"]) <= ctx.output.total
    assert {"strict", "relaxed", "typo"} <= stages  # every retrieval stage was compared
    assert leaner >= 3  # and the lean query was a different one where there is something to drop


def test_a_stage_that_replaces_the_match_query_is_counted_on_its_own(fashion: tuple[Any, Any]) -> None:
    index, config = fashion
    ctx = SearchPipeline(budget_s=60).run(index, config, SearchQuery("red shirt", facets=("brand",)))
    import tantivy

    ctx.retrieval.match_query = tantivy.Query.all_query()  # as pinning or semantic search do
    everything = Facets().run(ctx).output.facet_counts["brand"]
    assert sum(c for _, c in everything) > ctx.output.total  # the catalog's brands, not the lean query's
