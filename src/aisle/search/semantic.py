"""Shape vector neighbours as the spec's search response (products, total, facets, queryGraph).

``POST /vector-search`` answers like ``POST /search``: the neighbour pool (the ``k`` nearest products
that pass the filters, :data:`POOL` by default) plays the part of the match set: ``total`` is its size,
facets count over it, and ``products`` is the requested page of it, nearest first (or by price). The
tenant's stock policy applies to the pool (:func:`aisle.search.stages.stock.stocked`).
"""

from __future__ import annotations

import tantivy

from aisle.core.tenancy import TenantConfig
from aisle.search.context import Hit, SearchContext
from aisle.search.index.reader import TenantIndex
from aisle.search.model import QueryGraph, SearchResult
from aisle.search.normalize import normalize
from aisle.search.pipeline import SearchPipeline
from aisle.search.query import SearchQuery
from aisle.search.query.filters import filter_clause
from aisle.search.stages.facets import Facets
from aisle.search.stages.stock import stocked
from aisle.vectors.search import Neighbour

POOL = 200


def pool_size(size: int, offset: int) -> int:
    """Neighbours to fetch for a page: at least :data:`POOL`, enough for ``offset + size``."""
    return min(1000, max(POOL, offset + size))


class NearestNeighbours:
    """The first stage of a semantic search: ``neighbours`` (nearest first) as the match set.

    Fills the queryGraph (the query normalised, the request filters as applied), the page, the total
    (the pool's size) and a match query over the pool for the facet stage. Products not in the catalog
    are skipped. Raises BadRequest for a bad filter (as :func:`filter_clause`).
    """

    def __init__(self, neighbours: list[Neighbour]) -> None:
        self.neighbours = neighbours

    def run(self, ctx: SearchContext) -> SearchContext:
        index, query = ctx.index, ctx.query
        normalized = normalize(query.text)
        graph = QueryGraph(
            original=query.text, normalized=normalized, tokens=normalized.split(), sort=query.sort
        )
        for spec in query.filters:
            graph.filters.append(filter_clause(index, spec)[1])
        pool = [Hit(index.ord_by_id[n.id], n.score) for n in self.neighbours if n.id in index.ord_by_id]
        if query.sort != "relevance":
            sign = 1.0 if query.sort == "price_asc" else -1.0
            prices = {h.ord: index.rows.value(h.ord, "price") for h in pool}  # every row has "price"
            priced = [h for h in pool if prices[h.ord] is not None]
            unpriced = [h for h in pool if prices[h.ord] is None]
            pool = sorted(priced, key=lambda h: sign * float(prices[h.ord])) + unpriced
        pool = stocked(ctx, pool)  # the tenant's stock policy and the request's store, order kept within
        graph.stages_tried.append({"stage": "vector", "hits": len(pool)})
        ctx.graph = graph
        ctx.output.total = len(pool)
        ctx.output.hits = pool[query.offset : query.offset + query.size]
        if pool:
            product_ids = index.product_ids()
            ids = [product_ids[h.ord] for h in pool]
            ctx.retrieval.match_query = tantivy.Query.term_set_query(index.schema, "id", ids)
        return ctx


def vector_search_result(
    index: TenantIndex, config: TenantConfig, query: SearchQuery, neighbours: list[Neighbour]
) -> SearchResult:
    """The response for ``neighbours`` (nearest first): the search pipeline with two stages,
    :class:`NearestNeighbours` and the lexical search's own :class:`Facets`.

    Raises:
        BadRequest: a bad filter; unknown or non-facetable facet (``facet_unknown`` / ``facet_not_allowed``).
    """
    return SearchPipeline((NearestNeighbours(neighbours), Facets())).search(index, config, query)
