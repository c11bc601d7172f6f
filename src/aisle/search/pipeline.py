"""The search pipeline (spec "Search service": query understanding, merchandising rules, staged
full-text search, facet calculation, fallback), as small stages over one :class:`SearchContext`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from pydantic import TypeAdapter

from aisle.core.errors import AisleError
from aisle.core.tenancy import TenantConfig
from aisle.core.timing import add_timing, timing_enabled
from aisle.search.context import SearchContext
from aisle.search.index.reader import TenantIndex
from aisle.search.model import FacetValue, SearchResult
from aisle.search.query import SearchQuery
from aisle.search.rules.book import RuleDraft
from aisle.search.stages.attributes import ExtractAttributes
from aisle.search.stages.facets import Facets
from aisle.search.stages.fallback import Fallback, Steps, blocking
from aisle.search.stages.filters import ApplyFilters
from aisle.search.stages.follow_up import AskFollowUp
from aisle.search.stages.hybrid import Hybrid
from aisle.search.stages.rerank import Rerank
from aisle.search.stages.retrieve import Retrieve
from aisle.search.stages.rules import ApplyRuleActions, Clock, MerchandisingRules, PinProducts, RuleSource
from aisle.search.stages.stock import ApplyStock, OrderByStock
from aisle.search.stages.understand import Understand

if TYPE_CHECKING:
    from aisle.search.external.registry import ExternalSearches
    from aisle.search.filter_rows import FilterRows
    from aisle.search.ranking.store import RankerStore
    from aisle.vectors.search import VectorSearch


class Stage(Protocol):
    def run(self, ctx: SearchContext) -> SearchContext: ...


@runtime_checkable
class ReadsCandidates(Protocol):
    """A stage that reads the first lexical hits beyond the page (retrieval fetches them for it)."""

    def candidate_depth(self, ctx: SearchContext) -> int: ...


def default_stages(
    *,
    rules: RuleSource | None = None,
    clock: Clock | None = None,
    vectors: VectorSearch | None = None,
    filter_rows: FilterRows | None = None,
    rankers: RankerStore | None = None,
    external: ExternalSearches | None = None,
) -> tuple[Stage, ...]:
    """The search stages in order, each given what it reads; a stage given nothing does nothing.

    ``rules`` feeds the merchandising stages (``clock`` the instant they match at, tests pass one; a
    preview passes its draft rule set to :meth:`SearchPipeline.run` instead), ``vectors`` the hybrid
    stage (``filter_rows`` its filter cache), ``rankers`` the learned reranking, ``external`` the
    fallback to each tenant's external search service (``crs_config.json``). ``default_stages()`` is
    plain lexical search with query understanding and facets. The tenant's stock policy and the
    request's store filter with the request's filters (before the rules' actions, so a pinned product
    out of stock is hidden too) and order the page before pins
    (:mod:`aisle.search.stages.stock`). A broad search's follow-up question
    (guided search, a tenant setting) comes last, from the counts the facets stage made for it.
    """
    follow_up = AskFollowUp()
    return (
        MerchandisingRules(rules, clock),
        Understand(),
        ApplyFilters(),
        ApplyStock(),
        ApplyRuleActions(),
        ExtractAttributes(),
        Retrieve(),
        Hybrid(vectors, filter_rows),
        Rerank(rankers),
        OrderByStock(),
        PinProducts(),
        Facets((follow_up,)),
        Fallback(external),
        follow_up,
    )


# a stage's name in the Server-Timing header (aisle.core.timing); a class not named here: its own name
STAGE_NAMES = {
    MerchandisingRules: "rules",
    Understand: "understand",
    ApplyFilters: "filters",
    ApplyStock: "stock",
    ApplyRuleActions: "rule-actions",
    ExtractAttributes: "attributes",
    Retrieve: "retrieve",
    Hybrid: "hybrid",
    Rerank: "rerank",
    OrderByStock: "stock-order",
    PinProducts: "pin",
    Facets: "facets",
    Fallback: "fallback",
    AskFollowUp: "follow-up",
}


class SearchPipeline:
    """Runs the stages in order and shapes the spec's search response.

    ``stages`` defaults to :func:`default_stages` with nothing bound (no rules, vectors or ranker).
    Within a request each stage's wall time is added to the request's timings (``Server-Timing``).
    """

    def __init__(self, stages: tuple[Stage, ...] | None = None, budget_s: float = 0.25) -> None:
        self.stages = stages if stages is not None else default_stages()
        self.budget_s = budget_s
        self._named = [(STAGE_NAMES.get(type(s), type(s).__name__.lower()), s) for s in self.stages]
        self._readers = [s for s in self.stages if isinstance(s, ReadsCandidates)]

    def search(
        self,
        index: TenantIndex,
        config: TenantConfig,
        query: SearchQuery,
        *,
        draft: RuleDraft | None = None,
        ranker_version: int | None = None,
    ) -> SearchResult:
        """Search one tenant: ``query.size`` (0..100) products from ``query.offset``; facets over all
        matches. ``draft`` replaces the tenant's live merchandising rules for this search (a preview, or
        an experiment's variant), ``ranker_version`` its live learned ranker. The fallback's external
        call, when the search makes one, blocks this thread (:func:`~aisle.search.stages.fallback.blocking`).

        Raises:
            BadRequest: unknown or disallowed filter/facet fields, bad filter values, unavailable sort.
        """
        return blocking(self.search_steps(index, config, query, draft=draft, ranker_version=ranker_version))

    def search_steps(
        self,
        index: TenantIndex,
        config: TenantConfig,
        query: SearchQuery,
        *,
        draft: RuleDraft | None = None,
        ranker_version: int | None = None,
    ) -> Steps[SearchResult]:
        """:meth:`search` as steps (:meth:`steps`, then the response shaped): what a caller on an event
        loop drives with :func:`~aisle.search.stages.fallback.awaited`, the external call awaited.

        Raises: as :meth:`search`.
        """
        return _shaped(
            (yield from self.steps(index, config, query, draft=draft, ranker_version=ranker_version))
        )

    def run(
        self,
        index: TenantIndex,
        config: TenantConfig,
        query: SearchQuery,
        *,
        draft: RuleDraft | None = None,
        ranker_version: int | None = None,
    ) -> SearchContext:
        """Run every stage and return the final context (its ``retrieval.match_query`` selects all
        matches); ``draft`` as in :meth:`search`. Raises: as :meth:`search`."""
        return blocking(self.steps(index, config, query, draft=draft, ranker_version=ranker_version))

    def steps(
        self,
        index: TenantIndex,
        config: TenantConfig,
        query: SearchQuery,
        *,
        draft: RuleDraft | None = None,
        ranker_version: int | None = None,
    ) -> Steps[SearchContext]:
        """The one stage loop, for a thread and an event loop alike: a generator that runs the stages
        in order, yields the external call a stage makes (only the fallback makes one) and is sent its
        answer; it returns the final context. :func:`~aisle.search.stages.fallback.blocking` drives it on
        a thread, :func:`~aisle.search.stages.fallback.awaited` on an event loop.

        A stage that raises fails the search, unless the tenant falls back to its external service on
        ``error`` and that service answers (:meth:`Fallback.rescue`); a client's error (a 4xx) always
        fails it.
        """
        ctx = self._start(index, config, query, draft, ranker_version)
        timed = timing_enabled()
        for name, stage in self._named:
            try:
                start = time.perf_counter() if timed else 0.0
                ctx = (yield from stage.steps(ctx)) if isinstance(stage, Fallback) else stage.run(ctx)
                if timed:
                    add_timing(name, time.perf_counter() - start)
            except Exception as exc:
                fallback = self._rescuer(exc)
                if fallback is None or not (yield from fallback.rescue(ctx, exc)):
                    raise
                return ctx
        return ctx

    def _start(
        self,
        index: TenantIndex,
        config: TenantConfig,
        query: SearchQuery,
        draft: RuleDraft | None,
        ranker_version: int | None,
    ) -> SearchContext:
        ctx = SearchContext.start(
            index, config, query, budget_s=self.budget_s, draft_rules=draft, ranker_version=ranker_version
        )
        if query.sort == "relevance" and query.size > 0:
            depths = [(s, s.candidate_depth(ctx)) for s in self._readers]
            ctx.retrieval.candidate_depth = max((d for _, d in depths), default=0)
            ctx.retrieval.candidates_reranked = any(isinstance(s, Rerank) and d > 0 for s, d in depths)
        return ctx

    def _rescuer(self, error: Exception) -> Fallback | None:
        """The fallback stage that may answer after ``error``: none for a client's error (a 4xx)."""
        if isinstance(error, AisleError) and error.status < 500:
            return None
        return next((s for s in self.stages if isinstance(s, Fallback)), None)


def _shaped(ctx: SearchContext) -> SearchResult:
    start = time.perf_counter()
    result = shape_result(ctx)
    add_timing("shape", time.perf_counter() - start)
    return result


_FACETS = TypeAdapter(dict[str, list[FacetValue]])  # one pydantic-core call for every facet value


def shape_result(ctx: SearchContext) -> SearchResult:
    """The response of a finished search. Built with ``model_construct``: every part is made here from
    values the stages already checked, so pydantic's validation (a copy of every product) is skipped;
    the facet values are validated in one call (half the cost of a ``FacetValue(...)`` each)."""
    rows = ctx.index.rows
    relevance = ctx.query.sort == "relevance"
    products = []
    for hit in ctx.output.hits:
        product = rows[hit.ord]  # a new dict per read
        product["score"] = round(hit.score, 4) if relevance else None
        products.append(product)
    facets = _FACETS.validate_python(
        {
            name: [{"value": v, "count": c} for v, c in values]
            for name, values in ctx.output.facet_counts.items()
        }
    )
    total, redirect, external = int(ctx.output.total), ctx.merchandising.redirect, ctx.output.external
    if external is not None:
        products, total, facets = external.merged(products, total, facets, ctx.query.size)
        redirect = redirect or external.redirect_uri
    assert ctx.graph is not None
    ctx.graph.took_ms = round((time.perf_counter() - ctx.started) * 1000, 3)
    return SearchResult.model_construct(
        products=products,
        total=total,
        facets=facets,
        query_graph=ctx.graph,
        redirect=redirect,
        corrected_query=external.corrected_query if external is not None else None,
        follow_up=ctx.output.follow_up,
    )
