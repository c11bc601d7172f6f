"""The search pipeline (spec "Search service": query understanding, merchandising rules, staged
full-text search, facet calculation, fallback), as small stages over one :class:`SearchContext`.
"""

from __future__ import annotations

import time
from typing import Protocol

from aisle.core.tenancy import TenantConfig
from aisle.search.context import SearchContext
from aisle.search.index.reader import TenantIndex
from aisle.search.model import FacetValue, FilterSpec, SearchResult, SortOrder
from aisle.search.stages.attributes import ExtractAttributes
from aisle.search.stages.facets import Facets
from aisle.search.stages.filters import ApplyFilters
from aisle.search.stages.hybrid import Hybrid
from aisle.search.stages.rerank import Rerank
from aisle.search.stages.retrieve import Retrieve
from aisle.search.stages.rules import ApplyRuleActions, MerchandisingRules, PinProducts
from aisle.search.stages.understand import Understand


class Stage(Protocol):
    def run(self, ctx: SearchContext) -> SearchContext: ...


DEFAULT_STAGES: tuple[Stage, ...] = (
    MerchandisingRules(),
    Understand(),
    ApplyFilters(),
    ApplyRuleActions(),
    ExtractAttributes(),
    Retrieve(),
    Hybrid(),
    Rerank(),
    PinProducts(),
    Facets(),
)


class SearchPipeline:
    """Runs the stages in order and shapes the spec's search response."""

    def __init__(self, stages: tuple[Stage, ...] = DEFAULT_STAGES, budget_s: float = 0.25) -> None:
        self.stages = stages
        self.budget_s = budget_s

    def search(
        self,
        index: TenantIndex,
        config: TenantConfig,
        query: str,
        *,
        size: int = 20,
        offset: int = 0,
        filters: list[FilterSpec] | None = None,
        facets: list[str] | None = None,
        sort: SortOrder = "relevance",
        user_group: str | None = None,
    ) -> SearchResult:
        """Search one tenant. ``size`` 0..100 products from ``offset``; facets over all matches.

        Raises:
            BadRequest: unknown or disallowed filter/facet fields, bad filter values, unavailable sort.
        """
        return shape_result(
            self.run(
                index,
                config,
                query,
                size=size,
                offset=offset,
                filters=filters,
                facets=facets,
                sort=sort,
                user_group=user_group,
            )
        )

    def run(
        self,
        index: TenantIndex,
        config: TenantConfig,
        query: str,
        *,
        size: int = 20,
        offset: int = 0,
        filters: list[FilterSpec] | None = None,
        facets: list[str] | None = None,
        sort: SortOrder = "relevance",
        user_group: str | None = None,
    ) -> SearchContext:
        """Run every stage and return the final context (its ``match_query`` selects all matches)."""
        start = time.perf_counter()
        ctx = SearchContext(
            index=index,
            config=config,
            query=query,
            size=size,
            offset=offset,
            filters=list(filters or []),
            facets=list(dict.fromkeys(facets or [])),
            sort=sort,
            user_group=user_group,
            deadline=start + self.budget_s,
            started=start,
        )
        for stage in self.stages:
            ctx = stage.run(ctx)
        return ctx


def shape_result(ctx: SearchContext) -> SearchResult:
    rows = ctx.index.rows
    products = []
    for hit in ctx.hits:
        product = dict(rows[hit.ord])
        product["score"] = round(hit.score, 4) if ctx.sort == "relevance" else None
        products.append(product)
    facets = {
        name: [FacetValue(value=v, count=c) for v, c in values] for name, values in ctx.facet_counts.items()
    }
    assert ctx.graph is not None
    ctx.graph.took_ms = round((time.perf_counter() - ctx.started) * 1000, 3)
    return SearchResult(
        products=products, total=ctx.total, facets=facets, queryGraph=ctx.graph, redirect=ctx.redirect
    )
