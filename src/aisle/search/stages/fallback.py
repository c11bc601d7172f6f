"""The last stage of the search pipeline: fallback to the tenant's external retail search service.

Spec "Search service": "optional fallback to an external retail search service". Per tenant,
``crs_config.json`` says when (``fallback.when``: ``no_results``, ``few_results`` below
``min_results``, ``rule`` when a merchandising rule with an ``external`` action fired or the query is
one of ``fallback.queries``, ``error`` when an Aisle stage failed)
and how to merge (``replace``, or ``append`` after Aisle's products without repeating them). Results
are counted as products the query's words matched: the nearest products hybrid retrieval adds when no
word matched (``ctx.retrieval.vector_only``) are Aisle's guesses, not an answer, so a query only they
"answer" still falls back on ``no_results``. An external answer with no products leaves Aisle's as is.

It never fails the search: the call gets what is left of the search deadline (at most
``fallback.timeout_ms``), goes through the tenant's circuit breaker, takes a free slot or is skipped
(it never waits for one), and any failure leaves Aisle's own answer as it was. ``queryGraph.external``
says what happened: ``answered`` (with the trigger as ``reason``), ``skipped`` (``not_triggered``,
``breaker_open``, ``busy``, ``deadline``) or ``failed`` (the error ``code``). It stays None for a tenant
without an external service, and for a search asking no products (size 0).
"""

from __future__ import annotations

import time
from collections.abc import Generator
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeVar

from aisle.core.crs_config import FallbackConfig, FallbackTrigger
from aisle.search.context import SearchContext
from aisle.search.external.errors import ExternalSearchError
from aisle.search.external.guarded import BreakerOpen, Busy, GuardedExternalSearch
from aisle.search.external.hydrate import ExternalPage, hydrate
from aisle.search.external.protocol import ExternalResult, ExternalSearchRequest
from aisle.search.external.registry import ExternalSearches
from aisle.search.model import ExternalSearchGraph, QueryGraph
from aisle.search.normalize import normalize
from aisle.search.rules.model import ExternalAction

MIN_BUDGET_S = 0.005
"""Below this much time left before the deadline the external service is not asked."""


class Fallback:
    """Asks the tenant's external search service when ``crs_config.json`` says so (see the module).

    ``external`` None (no registry in this process): the stage does nothing.
    """

    def __init__(self, external: ExternalSearches | None) -> None:
        self.external = external

    def run(self, ctx: SearchContext) -> SearchContext:
        """The stage on its own, its external call made on this thread (:func:`blocking`)."""
        return blocking(self.steps(ctx))

    def steps(self, ctx: SearchContext) -> Steps[SearchContext]:
        """The stage as the pipeline's stage loop runs it: yields the :class:`ExternalCall` it makes, if
        any, and takes its answer back (the loop's driver makes the call blocking or awaits it)."""
        ask = self._ask(ctx)
        if ask is None:
            return ctx
        started = time.perf_counter()
        try:
            result, cached = yield ExternalCall(self._guarded(ctx), ask.request)
        except ExternalSearchError as exc:
            return _refused(ctx, ask, exc)
        return _answered(ctx, ask, result, cached, started)

    def _guarded(self, ctx: SearchContext) -> GuardedExternalSearch:
        assert self.external is not None  # _ask asks nothing without one
        return self.external.get(ctx.config.tenant, ctx.config.crs)

    def _ask(self, ctx: SearchContext) -> _Ask | None:
        """The external request this search makes, or None (``queryGraph.external`` then says why)."""
        crs = ctx.config.crs
        if self.external is None or not crs.active or ctx.query.size == 0:
            return None  # size 0: counting only (e.g. category counts), no page to fill
        graph = ctx.graph if ctx.graph is not None else _bare_graph(ctx)
        ctx.graph = graph
        trigger = trigger_for(ctx, crs.fallback)
        if trigger is None:
            graph.external = ExternalSearchGraph(status="skipped", reason="not_triggered")
            return None
        left = ctx.deadline - time.perf_counter()
        budget = min(crs.fallback.timeout_ms / 1000, left)
        if budget < MIN_BUDGET_S:
            graph.external = ExternalSearchGraph(status="skipped", reason="deadline")
            return None
        merge = crs.fallback.merge
        offset, size = ctx.query.offset, ctx.query.size
        if merge == "append":
            offset, size = (
                max(ctx.query.offset - ctx.output.total, 0),
                max(ctx.query.size - len(ctx.output.hits), 0),
            )
        asked = replace(  # the search as the stages left it: a rule's rewrite and filters included
            ctx.query,
            text=ctx.understanding.text,
            filters=ctx.retrieval.filters,
            facets=ctx.query.facets if merge == "replace" else (),
            offset=offset,
            size=size,
        )
        return _Ask(ExternalSearchRequest.of(asked, timeout_s=budget), trigger, merge, graph)

    def rescue(self, ctx: SearchContext, error: Exception) -> Steps[bool]:
        """After an Aisle stage raised ``error``: whether the external service answered instead
        (the tenant falls back on ``error`` and the answer came), as steps like :meth:`steps`. The
        context then holds it, in ``replace`` mode whatever the configured merge, since Aisle has no
        results of its own."""
        if not self._rescuing(ctx, error):
            return False
        return _rescued((yield from self.steps(ctx)))

    def _rescuing(self, ctx: SearchContext, error: Exception) -> bool:
        """Whether the tenant falls back on ``error``; if so, the context is emptied for the call."""
        crs = ctx.config.crs
        if self.external is None or not crs.active or "error" not in crs.fallback.when:
            return False
        ctx.output.stage_error = error
        ctx.output.hits, ctx.output.total, ctx.retrieval.vector_only, ctx.output.facet_counts = [], 0, 0, {}
        return True


@dataclass(frozen=True)
class ExternalCall:
    """The one call a search may wait for: the fallback's request to the tenant's external service,
    through its guard (the same deadline, breaker, slots and cache either way). The stage loop yields
    it; :func:`blocking` makes it on the caller's thread, :func:`awaited` awaits it on an event loop.
    Either returns ``(result, cached)`` or raises :class:`ExternalSearchError`."""

    guarded: GuardedExternalSearch
    request: ExternalSearchRequest

    def blocking(self) -> tuple[ExternalResult, bool]:
        return self.guarded.search(self.request, wait_s=0)

    async def awaited(self) -> tuple[ExternalResult, bool]:
        return await self.guarded.search_async(self.request)


T = TypeVar("T")
Steps = Generator[ExternalCall, Any, T]
"""A stage loop (or one stage) as a generator: it yields each :class:`ExternalCall` it makes and is sent
the call's answer (or thrown its error); its return value is the loop's."""


def blocking(steps: Steps[T]) -> T:
    """Run ``steps`` to the end on this thread, making each call blocking (a thread-pool search)."""
    answer: Any = None
    error: Exception | None = None
    while True:
        try:
            call = steps.send(answer) if error is None else steps.throw(error)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        try:
            answer, error = call.blocking(), None
        except Exception as exc:  # the steps decide what a failed call means
            answer, error = None, exc


async def awaited(steps: Steps[T]) -> T:
    """Run ``steps`` to the end on an event loop: the stages inline (CPU work), each call awaited."""
    answer: Any = None
    error: Exception | None = None
    while True:
        try:
            call = steps.send(answer) if error is None else steps.throw(error)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        try:
            answer, error = await call.awaited(), None
        except Exception as exc:  # the steps decide what a failed call means
            answer, error = None, exc


def _rescued(ctx: SearchContext) -> bool:
    if ctx.output.external is None:
        return False
    ctx.output.external = replace(ctx.output.external, merge="replace")
    return True


@dataclass(frozen=True)
class _Ask:
    """A call the fallback makes: the request, what triggered it, how its answer merges."""

    request: ExternalSearchRequest
    trigger: FallbackTrigger
    merge: Literal["replace", "append"]
    graph: QueryGraph


def _refused(ctx: SearchContext, ask: _Ask, exc: ExternalSearchError) -> SearchContext:
    if isinstance(exc, BreakerOpen | Busy):
        ask.graph.external = ExternalSearchGraph(status="skipped", reason=exc.reason, code=str(exc.code))
    else:
        ask.graph.external = ExternalSearchGraph(status="failed", reason=ask.trigger, code=str(exc.code))
    return ctx


def _answered(
    ctx: SearchContext, ask: _Ask, result: ExternalResult, cached: bool, started: float
) -> SearchContext:
    products = hydrate(result.products, ctx.index)
    if products or ask.merge == "append":
        ctx.output.external = ExternalPage(
            merge=ask.merge,
            products=products,
            total=result.total,
            facets=result.facets,
            corrected_query=result.corrected_query,
            redirect_uri=result.redirect_uri,
        )
    ask.graph.external = ExternalSearchGraph(
        status="answered",
        reason=ask.trigger,
        backend=result.backend,
        merge=ask.merge,
        products=len(products),
        total=result.total,
        cached=cached,
        took_ms=round((time.perf_counter() - started) * 1000, 3),
        attribution_token=result.attribution_token,
    )
    return ctx


def trigger_for(ctx: SearchContext, settings: FallbackConfig) -> FallbackTrigger | None:
    """The first of the tenant's triggers that holds for this search, or None."""
    when = settings.when
    if "error" in when and ctx.output.stage_error is not None:
        return "error"
    if "rule" in when and routed_by_rule(ctx, settings):
        return "rule"
    matched = ctx.output.total - ctx.retrieval.vector_only
    if "no_results" in when and matched == 0:
        return "no_results"
    if "few_results" in when and matched < settings.min_results:
        return "few_results"
    return None


def routed_by_rule(ctx: SearchContext, settings: FallbackConfig) -> bool:
    """Whether a merchandising rule that fired has an ``external`` action, or the normalised query is
    one of ``fallback.queries``."""
    fired = ctx.merchandising.rules.fired if ctx.merchandising.rules is not None else []
    if any(isinstance(a, ExternalAction) for rule in fired for a in rule.actions):
        return True
    routed = {normalize(q).strip() for q in settings.queries}
    return ctx.graph is not None and ctx.graph.normalized.strip() in routed


def _bare_graph(ctx: SearchContext) -> QueryGraph:
    """A queryGraph for a search that failed before query understanding made one."""
    return QueryGraph(
        original=ctx.understanding.text, normalized=normalize(ctx.understanding.text), sort=ctx.query.sort
    )
