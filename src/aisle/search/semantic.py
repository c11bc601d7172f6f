"""Shape vector neighbours as the spec's search response (products, total, facets, queryGraph).

``POST /vector-search`` answers like ``POST /search``: the neighbour pool (the ``k`` nearest products
that pass the filters, :data:`POOL` by default) plays the part of the match set: ``total`` is its size,
facets count over it, and ``products`` is the requested page of it, nearest first (or by price).
"""

from __future__ import annotations

import tantivy

from aisle.core.tenancy import TenantConfig
from aisle.search.context import Hit, SearchContext
from aisle.search.index.reader import TenantIndex
from aisle.search.model import FilterSpec, QueryGraph, SearchResult, SortOrder
from aisle.search.normalize import normalize
from aisle.search.pipeline import shape_result
from aisle.search.stages.facets import Facets
from aisle.search.stages.filters import filter_clause
from aisle.vectors.search import Neighbour

POOL = 200


def pool_size(size: int, offset: int) -> int:
    """Neighbours to fetch for a page: at least :data:`POOL`, enough for ``offset + size``."""
    return min(1000, max(POOL, offset + size))


def vector_search_result(
    index: TenantIndex,
    config: TenantConfig,
    query: str,
    neighbours: list[Neighbour],
    *,
    size: int = 20,
    offset: int = 0,
    filters: list[FilterSpec] | None = None,
    facets: list[str] | None = None,
    sort: SortOrder = "relevance",
) -> SearchResult:
    """The response for ``neighbours`` (nearest first). Products not in the catalog are skipped.

    Raises:
        BadRequest: unknown or non-facetable facet (``facet_unknown`` / ``facet_not_allowed``).
    """
    normalized = normalize(query)
    graph = QueryGraph(original=query, normalized=normalized, tokens=normalized.split(), sort=sort)
    for spec in filters or []:
        graph.filters.append(filter_clause(index, spec)[1])
    pool = [Hit(index.ord_by_id[n.id], n.score) for n in neighbours if n.id in index.ord_by_id]
    if sort != "relevance":
        price = "price"
        sign = 1.0 if sort == "price_asc" else -1.0
        priced = [h for h in pool if index.rows[h.ord].get(price) is not None]
        unpriced = [h for h in pool if index.rows[h.ord].get(price) is None]
        pool = sorted(priced, key=lambda h: sign * float(index.rows[h.ord][price])) + unpriced
    graph.stages_tried.append({"stage": "vector", "hits": len(pool)})
    ctx = SearchContext.start(
        index, config, query, size=size, offset=offset, filters=filters, facets=facets, sort=sort
    )
    ctx.graph = graph
    ctx.total = len(pool)
    ctx.hits = pool[offset : offset + size]
    if pool:
        ids = [index.rows[h.ord]["id"] for h in pool]
        ctx.match_query = tantivy.Query.term_set_query(index.schema, "id", ids)
    ctx = Facets().run(ctx)
    return shape_result(ctx)
