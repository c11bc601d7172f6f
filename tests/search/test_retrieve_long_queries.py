"""Retrieval of long queries (issue 32, the long-query tail): term alternatives another one covers are
not searched, the typo stage is one union of scoring parts, the relaxed and typo stages hold the query's
terms within a postings budget; what each of these changes and what it keeps."""

from __future__ import annotations

import math
from typing import Any

import pytest
import tantivy
from hypothesis import given
from hypothesis import strategies as st

from aisle.core.tenancy import Tenants
from aisle.search.index.reader import hit_count
from aisle.search.indexes import IndexRegistry
from aisle.search.pipeline import SearchPipeline
from aisle.search.query import SearchQuery
from aisle.search.query.terms import fuzzy_query, term_query
from aisle.search.spelling import typo_distance
from aisle.search.stages import retrieve
from aisle.search.stages.retrieve import essential, postings, stages, within_budget

LONG = "classic polo men's combo pack of 2 dark blue army green t-shirt"


def test_a_phrase_holding_one_of_its_groups_words_is_not_searched() -> None:
    assert essential(["men", "men s"]) == ["men"]  # "men's" read as the joined "mens" (stem "men")
    assert essential(["t shirt", "tshirt", "tee"]) == ["t shirt", "tshirt", "tee"]
    assert essential(["rain barrel", "rainbarrel"]) == ["rain barrel", "rainbarrel"]
    assert essential(["sports shoes", "sneaker", "shoes"]) == ["sneaker", "shoes"]


@given(st.lists(st.integers(min_value=0, max_value=1000), min_size=1, max_size=14), st.integers(0, 3000))
def test_the_budget_keeps_the_cheapest_terms_and_the_rarest_always(costs: list[int], budget: int) -> None:
    kept = within_budget(costs, budget)
    assert kept == sorted(set(kept))
    assert min(costs) in [costs[i] for i in kept]  # never an empty stage
    assert len(kept) == 1 or sum(costs[i] for i in kept) <= budget
    dropped = [c for i, c in enumerate(costs) if i not in kept]
    assert all(c >= max(costs[i] for i in kept) for c in dropped)  # only the commonest are dropped
    if dropped:  # and no more than needed: the cheapest dropped one would not have fitted
        assert sum(costs[i] for i in kept) + min(dropped) > budget


@pytest.fixture(scope="module")
def fashion(demo_env: Any) -> tuple[Any, Any]:
    tenants = Tenants(demo_env.store, ttl=3600)
    return IndexRegistry(tenants, demo_env.data_dir).get("fashion"), tenants.config("fashion")


def _context(fashion: tuple[Any, Any], text: str) -> Any:
    index, config = fashion
    return SearchPipeline(budget_s=60).run(index, config, SearchQuery(text, size=20))


def test_dropping_covered_alternatives_keeps_the_matches(fashion: tuple[Any, Any]) -> None:
    ctx = _context(fashion, "men's watch")
    index = ctx.index
    assert ["men", "men s"] in ctx.understanding.term_groups
    assert index.count(term_query(index, ["men", "men s"])) == index.count(term_query(index, ["men"]))


def test_the_flat_typo_union_scores_as_the_nested_one(fashion: tuple[Any, Any]) -> None:
    """One union of every term's scoring parts ranks and scores as a union of one union per term did."""
    ctx = _context(fashion, "nikke runing shoos for men")
    flat = next(s for s in stages(_without_extracted(ctx)) if s.name == "typo")
    index, groups = ctx.index, [essential(g) for g in ctx.understanding.term_groups]
    typo = ctx.config.global_.stages.typo
    nested = []
    for group in (g for g in groups if g[0] not in flat.dropped):
        exact = term_query(index, group)
        parts = [
            (tantivy.Occur.Should, tantivy.Query.boost_query(exact, retrieve.BM25_SCALE)),
            (tantivy.Occur.Should, tantivy.Query.const_score_query(exact, retrieve.COVERAGE_SCORE)),
        ]
        distance = typo_distance(group[0], typo)
        if distance and postings(index, group) <= retrieve.FUZZY_MAX_SHARE * index.num_docs():
            fuzzy = fuzzy_query(index, group[0], distance)
            score = retrieve.COVERAGE_SCORE * retrieve.FUZZY_WEIGHT
            parts.append((tantivy.Occur.Should, tantivy.Query.const_score_query(fuzzy, score)))
        nested.append((tantivy.Occur.Should, tantivy.Query.boolean_query(parts)))
    old = index.searcher.search(tantivy.Query.boolean_query(nested), 50)
    new = index.searcher.search(flat.query, 50)
    assert hit_count(old) == hit_count(new) > 1000
    assert [a.doc for _, a in old.hits[:20]] == [a.doc for _, a in new.hits[:20]]
    assert [s for s, _ in old.hits] == pytest.approx([s for s, _ in new.hits], rel=1e-5)


def _without_extracted(ctx: Any) -> Any:
    ctx.understanding.extracted = []
    return ctx


def test_a_long_query_drops_its_commonest_terms_from_relaxed_and_typo(fashion: tuple[Any, Any]) -> None:
    ctx = _context(fashion, LONG)
    index = ctx.index
    tried = {t["stage"]: t for t in ctx.graph.stages_tried}
    assert "dropped" not in tried["strict"]  # strict always holds every term
    dropped = tried["typo"]["dropped"]
    assert "men" in dropped  # in nearly every fashion product's title or gender
    groups = [essential(g) for g in ctx.understanding.term_groups]
    kept = [g for g in groups if g[0] not in dropped]
    spent = sum(postings(index, g) for g in kept)
    assert spent <= retrieve.POSTINGS_BUDGET * index.num_docs()
    assert all(postings(index, g) >= max(postings(index, k) for k in kept) for g in groups if g not in kept)
    # the answer's total is the exact count of the stage's matches: any one kept term (or its typo)
    assert ctx.graph.stage == "typo"
    assert ctx.output.total == index.count(ctx.retrieval.lean_match[1]) == tried["typo"]["hits"]
    n = len(kept)
    msm = max(1, min(n - 1, math.ceil(n * ctx.config.global_.stages.relaxed_min_should_match)))
    relaxed = tantivy.Query.boolean_query([(tantivy.Occur.Should, term_query(index, g)) for g in kept], msm)
    assert tried["relaxed"]["hits"] == index.count(relaxed)


def test_a_short_query_of_common_words_keeps_them_all(fashion: tuple[Any, Any]) -> None:
    ctx = _context(fashion, "men blue tshirt")
    assert ctx.graph.stage == "strict"
    assert all("dropped" not in t for t in ctx.graph.stages_tried)
    rows = [ctx.index.rows[hit.ord] for hit in ctx.output.hits]
    assert rows and all(r["gender"] == "Men" and r["color"] == "Blue" for r in rows)
