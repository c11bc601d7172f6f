"""The tenant's stock policy and the request's ``storeId`` in search (issue 41; the contract is
:mod:`aisle.core.stock`).

Every document carries ``stock_in`` and ``stock_stores`` (:mod:`aisle.search.index.schema`), so each
rule is a term query:

* policy ``hide``: a filter (AND ``stock_in``), so totals, facets and every page agree;
* policy ``bury``: products in stock first, then the rest, each group in its own order;
* ``storeId`` with store mode ``filter`` (the default): a filter on that store's in-stock products,
  whatever the policy; with ``boost``: that store's products first, the policy applying to both groups;
* policy ``show`` and no store: nothing changes.

An order is a list of *tiers*, conditions with weights (the store's :data:`STORE_TIER` = 2, in stock
:data:`STOCK_TIER` = 1); a product's tier is the sum of the weights it meets, higher first. Two stages:

* :class:`ApplyStock` (after the request's filters, before the rules' actions: a rule's pins must pass
  the filter too) adds the filter, and for relevance order a constant
  boost of :data:`TIER_SCORE` per weight to every retrieval stage (greater than any other score: a
  rule's boost is at most 1,000), so the candidates later stages read are tiered too; retrieval takes
  the boosts out of the scores it hands on (:func:`unboosted`), so the hybrid blend and a learned
  ranker see the scores they were tuned on;
* :class:`OrderByStock` (after reranking, before pins) makes the page follow the tiers: a price-sorted
  page is fetched tier by tier (the matches of each tier in price order, the page cut across them);
  a relevance page (which the hybrid stage or a learned ranker may have reordered) is stably sorted by
  tier.

A semantic or image search's nearest products pass :func:`stocked` (the filters, then the tiers).
"""

from __future__ import annotations

import itertools

import numpy as np
import tantivy

from aisle.core.stock import StockPolicy
from aisle.search.context import Hit, SearchContext
from aisle.search.index.reader import TenantIndex, hit_count
from aisle.search.index.schema import IN_STOCK_FIELD, STORES_FIELD

STORE_TIER = 2.0
STOCK_TIER = 1.0
TIER_SCORE = 10_000.0
"""Score added per tier weight in relevance order: above BM25, coverage and rule boosts together."""


def in_stock_query(index: TenantIndex) -> tantivy.Query:
    """Products sellable now (``availability`` absent or not ``OUT_OF_STOCK``)."""
    return tantivy.Query.term_query(index.schema, IN_STOCK_FIELD, True)


def store_query(index: TenantIndex, store_id: str) -> tantivy.Query:
    """Products ``store_id`` has in stock (its inventory entry)."""
    return tantivy.Query.term_query(index.schema, STORES_FIELD, store_id)


def _and(queries: list[tantivy.Query]) -> tantivy.Query:
    if len(queries) == 1:
        return queries[0]
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in queries])


def stock_rule(ctx: SearchContext) -> tuple[list[tantivy.Query], list[tuple[tantivy.Query, float]]]:
    """The search's stock filters (AND) and tiers (module docstring), from the tenant's ``stock``
    setting and the request's ``storeId``; both empty when nothing changes."""
    stock, store = ctx.config.global_.stock, ctx.query.store_id
    index = ctx.index
    filters: list[tantivy.Query] = []
    tiers: list[tuple[tantivy.Query, float]] = []
    if store is not None and stock.store == "filter":
        filters.append(store_query(index, store))
    else:
        if store is not None:
            tiers.append((store_query(index, store), STORE_TIER))
        if stock.policy is StockPolicy.hide:
            filters.append(in_stock_query(index))
        elif stock.policy is StockPolicy.bury:
            tiers.append((in_stock_query(index), STOCK_TIER))
    return filters, tiers


def stocked(ctx: SearchContext, hits: list[Hit]) -> list[Hit]:
    """``hits`` without those the stock filters reject, stably sorted by tier: the stock rule over a
    list found otherwise (a semantic or image search's nearest products)."""
    filters, tiers = stock_rule(ctx)
    if not hits or not (filters or tiers):
        return hits
    index = ctx.index
    ids = [index.ids[h.ord] for h in hits]

    def meeting(condition: tantivy.Query) -> set[int]:
        query = _and([tantivy.Query.term_set_query(index.schema, "id", ids), condition])
        found = index.searcher.search(query, len(ids)).hits
        return set(index.ords(found)) if found else set()

    if filters:
        passing = meeting(_and(filters))
        hits = [h for h in hits if h.ord in passing]
    tier = {h.ord: 0.0 for h in hits}
    for condition, weight in tiers:
        for o in meeting(condition):
            if o in tier:
                tier[o] += weight
    return sorted(hits, key=lambda h: -tier[h.ord])


class ApplyStock:
    """Adds the stock filter to ``ctx.retrieval.filter_query`` and the tiers to
    ``ctx.retrieval.stock_tiers`` (with their boosts in relevance order); see the module docstring."""

    def run(self, ctx: SearchContext) -> SearchContext:
        filters, tiers = stock_rule(ctx)
        if filters:
            current = ctx.retrieval.filter_query
            ctx.retrieval.filter_query = _and(([current] if current is not None else []) + filters)
        ctx.retrieval.stock_tiers = tiers
        if ctx.query.sort == "relevance":
            ctx.merchandising.boosts += [(q, weight * TIER_SCORE) for q, weight in tiers]
        return ctx


def unboosted(ctx: SearchContext, scores: np.ndarray) -> np.ndarray:
    """Relevance ``scores`` (float32) without :class:`ApplyStock`'s tier boosts: each a multiple of
    :data:`TIER_SCORE` above every other part of a score, so the rest is the score modulo it. What the
    hybrid stage blends and a learned ranker reads are then the scores a search without stock makes."""
    if not ctx.retrieval.stock_tiers or ctx.query.sort != "relevance" or not len(scores):
        return scores
    return np.mod(scores, np.float32(TIER_SCORE)).astype(scores.dtype)


def tier_queries(tiers: list[tuple[tantivy.Query, float]]) -> list[tantivy.Query]:
    """One query per combination of the tiers' conditions (met or not), the highest total weight first."""
    combos = []
    for met in itertools.product((True, False), repeat=len(tiers)):
        weight = sum(w for (_, w), m in zip(tiers, met, strict=True) if m)
        clauses = [
            (tantivy.Occur.Must if m else tantivy.Occur.MustNot, q)
            for (q, _), m in zip(tiers, met, strict=True)
        ]
        if not any(m for m in met):  # a query of MustNot alone matches nothing
            clauses.insert(0, (tantivy.Occur.Must, tantivy.Query.all_query()))
        combos.append((weight, tantivy.Query.boolean_query(clauses)))
    return [q for _, q in sorted(combos, key=lambda c: -c[0])]


class OrderByStock:
    """Makes the page follow ``ctx.retrieval.stock_tiers`` (module docstring); nothing without tiers."""

    def run(self, ctx: SearchContext) -> SearchContext:
        tiers = ctx.retrieval.stock_tiers
        offset, size = ctx.window()
        if not tiers or size == 0 or ctx.retrieval.match_query is None or ctx.output.external is not None:
            return ctx
        if ctx.query.sort == "relevance":  # the page passed the filters: only its tiers are left
            ctx.output.hits = stocked(ctx, ctx.output.hits) if len(ctx.output.hits) > 1 else ctx.output.hits
        else:
            ctx.output.hits = self._fetched_by_tier(ctx, tiers, offset, size)
        return ctx

    @staticmethod
    def _fetched_by_tier(
        ctx: SearchContext, tiers: list[tuple[tantivy.Query, float]], offset: int, size: int
    ) -> list[Hit]:
        index, match = ctx.index, ctx.retrieval.match_query
        assert match is not None and index.price_field is not None
        order = tantivy.Order.Asc if ctx.query.sort == "price_asc" else tantivy.Order.Desc
        hits: list[Hit] = []
        for condition in tier_queries(tiers):
            if len(hits) >= size:
                break
            query = _and([match, tantivy.Query.const_score_query(condition, 0.0)])
            result = index.searcher.search(
                query,
                size - len(hits),
                count=True,
                offset=offset,
                order_by_field=index.price_field,
                order=order,
            )
            offset = max(0, offset - hit_count(result))
            found = result.hits
            ords = index.ords(found) if found else []
            hits += [
                Hit(o, float(s) if isinstance(s, int | float) else 0.0)
                for (s, _), o in zip(found, ords, strict=True)
            ]
        return hits
