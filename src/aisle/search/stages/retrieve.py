"""Staged full-text retrieval with BM25 (tantivy), stopping at the first stage with enough hits.

1. ``strict``: every term must match (in any searchable field).
2. ``relaxed``: most terms must match (``relaxed_min_should_match`` of them, at least one fewer than
   all); documents matching every term get a bonus so they stay ahead.
3. ``typo``: like relaxed, each term also matching within an edit distance that grows with its
   length (1 from ``min_length_one_typo`` characters, 2 from ``min_length_two_typos``; the
   Levenshtein automaton of tantivy's FuzzyTermQuery, transpositions costing 1).

Per term, fields are combined as a dis-max (best field plus ``TIE_BREAKER`` of the others, as
Elasticsearch's ``best_fields``), each field's BM25 scaled by its configured weight.
"""

from __future__ import annotations

import math

import tantivy

from aisle.core.errors import BadRequest
from aisle.core.tenant_config import TypoConfig
from aisle.search.context import Hit, SearchContext
from aisle.search.index.reader import TenantIndex

TIE_BREAKER = 0.3
ALL_TERMS_BONUS = 2.0
FUZZY_WEIGHT = 0.5


def _typo_distance(term: str, typo: TypoConfig) -> int:
    if not typo.enabled or any(ch.isdigit() for ch in term):
        return 0
    if len(term) >= typo.min_length_two_typos:
        return 2
    if len(term) >= typo.min_length_one_typo:
        return 1
    return 0


def term_query(index: TenantIndex, term: str, distance: int = 0) -> tantivy.Query:
    """Dis-max over the searchable fields of one analysed term, optionally fuzzy."""
    subs = []
    for attr in index.config.attributes:
        if not attr.searchable:
            continue
        field = f"s_{attr.name}"
        query = tantivy.Query.term_query(index.schema, field, term)
        if distance:
            fuzzy = tantivy.Query.fuzzy_term_query(index.schema, field, term, distance, True, False)
            query = tantivy.Query.boolean_query(
                [(tantivy.Occur.Should, query), (tantivy.Occur.Should, tantivy.Query.boost_query(fuzzy, FUZZY_WEIGHT))]
            )
        subs.append(tantivy.Query.boost_query(query, attr.weight))
    if len(subs) == 1:
        return subs[0]
    return tantivy.Query.disjunction_max_query(subs, TIE_BREAKER)


def stage_queries(ctx: SearchContext) -> list[tuple[str, tantivy.Query]]:
    """The (stage name, match query) pairs to try, in order."""
    if not ctx.terms:
        return [("browse", tantivy.Query.all_query())]
    index, stages = ctx.index, ctx.config.global_.stages
    exact = [term_query(index, t) for t in ctx.terms]
    strict = tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in exact])
    plan: list[tuple[str, tantivy.Query]] = [("strict", strict)]
    n = len(ctx.terms)
    if n >= 2:
        msm = max(1, min(n - 1, math.ceil(n * stages.relaxed_min_should_match)))
        relaxed = tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in exact], msm)
        bonus = tantivy.Query.boost_query(strict, ALL_TERMS_BONUS)
        plan.append(("relaxed", tantivy.Query.boolean_query([(tantivy.Occur.Must, relaxed), (tantivy.Occur.Should, bonus)])))
    distances = [_typo_distance(t, stages.typo) for t in ctx.terms]
    if any(distances):
        fuzzy = [term_query(index, t, d) for t, d in zip(ctx.terms, distances, strict=True)]
        msm = max(1, min(n - 1, math.ceil(n * stages.relaxed_min_should_match))) if n >= 2 else 1
        typo = tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in fuzzy], msm)
        plan.append(("typo", tantivy.Query.boolean_query([(tantivy.Occur.Must, typo), (tantivy.Occur.Should, strict)])))
    return plan


def with_filter(query: tantivy.Query, filter_query: tantivy.Query | None) -> tantivy.Query:
    if filter_query is None:
        return query
    return tantivy.Query.boolean_query(
        [(tantivy.Occur.Must, query), (tantivy.Occur.Must, tantivy.Query.const_score_query(filter_query, 0.0))]
    )


class Retrieve:
    """Runs the stages, keeps the first with ``min_hits`` (or the one with most hits), with its page.

    Raises:
        BadRequest: ``sort_unavailable`` when sorting by price on a catalog without prices.
    """

    def run(self, ctx: SearchContext) -> SearchContext:
        index = ctx.index
        min_hits = ctx.config.global_.stages.min_hits
        assert ctx.graph is not None
        order_field = None
        if ctx.sort != "relevance":
            order_field = index.price_field
            if order_field is None:
                raise BadRequest("this tenant's catalog has no price to sort by", code="sort_unavailable")
        order = tantivy.Order.Asc if ctx.sort == "price_asc" else tantivy.Order.Desc
        best: tuple[str, tantivy.Query, tantivy.SearchResult] | None = None
        for name, query in stage_queries(ctx):
            full = with_filter(query, ctx.filter_query)
            if order_field is None:
                result = index.searcher.search(full, max(ctx.size, 1), count=True, offset=ctx.offset)
            else:
                result = index.searcher.search(
                    full, max(ctx.size, 1), count=True, offset=ctx.offset, order_by_field=order_field, order=order
                )
            ctx.graph.stages_tried.append({"stage": name, "hits": result.count})
            if best is None or result.count > best[2].count:
                best = (name, full, result)
            if result.count >= min_hits or ctx.past_deadline():
                break
        assert best is not None
        name, ctx.match_query, result = best
        ctx.total = int(result.count or 0)
        ctx.graph.stage = name if ctx.total > 0 else "none"  # type: ignore[assignment]
        if ctx.size == 0 or not result.hits:
            return ctx
        ords = index.ords(result.hits)
        ctx.hits = [
            Hit(o, float(s) if isinstance(s, (int, float)) else 0.0) for (s, _), o in zip(result.hits, ords, strict=True)
        ]
        return ctx
