"""Merchandising rules in the search pipeline (spec: query understanding, merchandising rules, ...).

Three stages share one :class:`~aisle.search.rules.run.RuleRun` per request
(``ctx.merchandising.rules``):

1. :class:`MerchandisingRules` (before ``Understand``): finds the rules that fire for the shopper's
   query, time and user group; a ``rewrite`` replaces the text searched (``ctx.understanding.text``;
   highest priority wins). Rules match the shopper's own query: a rewritten query does not make
   further rules fire.
2. :class:`ApplyRuleActions` (after ``ApplyFilters``, before ``ExtractAttributes``/``Retrieve``):
   filters AND into ``ctx.retrieval.filter_query`` (queryGraph.filters, source ``rule``), boosts and
   buries go to ``ctx.merchandising.boosts``, hidden products to ``ctx.merchandising.exclude_query``
   (so never counted), the first redirect to ``ctx.merchandising.redirect``; pinned products (in the
   catalog, not hidden, passing the filters) are taken out of the organic results and planned into
   ``ctx.merchandising.pins`` (:class:`~aisle.search.paging.PinPlan`), so the retrieval stages fetch
   only the organic part of the page (``ctx.window()``).
3. :class:`PinProducts` (after ``Retrieve``): places the pins on the page (see
   :mod:`aisle.search.paging`). ``total`` counts every pinned product once, and facets count them; a
   pinned product carries the page's top score. Of two rules pinning to one position, the higher
   priority keeps it and the other product takes the next free position.

queryGraph.rules lists each fired rule: ``{id, name, version, actions}``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

import tantivy

from aisle.catalog.schema import PATH_SEP
from aisle.core.errors import AisleError
from aisle.core.tenant_config import AttributeType
from aisle.search.context import SearchContext
from aisle.search.paging import PinPlan
from aisle.search.query.filters import filter_clause
from aisle.search.rules.book import RuleBook
from aisle.search.rules.model import (
    BoostAction,
    FilterAction,
    HideAction,
    PinAction,
    RedirectAction,
    RewriteAction,
)
from aisle.search.rules.run import RuleRun

log = logging.getLogger("aisle.search.rules")
Clock = Callable[[], datetime]


class RuleSource(Protocol):
    """Where the stages get a tenant's rules (``RuleBooks`` over storage, or a fixed book)."""

    def book(self, tenant: str) -> RuleBook: ...


@dataclass
class FixedRules:
    """The same book for every tenant (previews and tests)."""

    rules: RuleBook

    def book(self, tenant: str) -> RuleBook:
        return self.rules


# Up to this many ids, a disjunction of term queries: a term-set query costs about 0.3 ms more per search
# and as much again in the facet pass on the 44k-product fashion index (measured in bench_rules).
TERM_SET_FROM = 32


def ids_query(schema: tantivy.Schema, ids: list[str]) -> tantivy.Query:
    """Products whose ``id`` is one of ``ids`` (non-empty)."""
    if len(ids) >= TERM_SET_FROM:
        return tantivy.Query.term_set_query(schema, "id", ids)
    return _any([tantivy.Query.term_query(schema, "id", i) for i in ids])


def _all(queries: list[tantivy.Query]) -> tantivy.Query:
    if len(queries) == 1:
        return queries[0]
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in queries])


def _any(queries: list[tantivy.Query]) -> tantivy.Query:
    if len(queries) == 1:
        return queries[0]
    return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in queries])


class MerchandisingRules:
    """Matches the rules (before ``Understand``). Without a ``source`` no rule ever fires, unless the
    search carries a draft rule set (``ctx.draft_rules``, a preview): then that set fires, at its instant.

    Args:
        source: the tenants' rules.
        clock: the current time (timezone-aware).
    """

    def __init__(self, source: RuleSource | None = None, clock: Clock | None = None) -> None:
        self.source = source
        self.clock = clock or (lambda: datetime.now(UTC))

    def run(self, ctx: SearchContext) -> SearchContext:
        draft = ctx.draft_rules
        if draft is not None:
            book, at = draft.book, draft.at
        elif self.source is not None:
            book, at = self.source.book(ctx.index.tenant), self.clock()
        else:
            return ctx
        fired = book.fire(ctx.query.text, at, ctx.query.user_group)
        if not fired:
            return ctx
        run = RuleRun(original_query=ctx.query.text, fired=fired)
        for rule in fired:
            rewrite = next((a for a in rule.actions if isinstance(a, RewriteAction)), None)
            if rewrite is not None:
                ctx.understanding.text = rewrite.query
                break
        ctx.merchandising.rules = run
        return ctx


class ApplyRuleActions:
    """Turns the fired rules' actions into filters, boosts, exclusions, a redirect and pins."""

    def run(self, ctx: SearchContext) -> SearchContext:
        run = ctx.merchandising.rules
        if run is None:
            return ctx
        graph, index = ctx.graph, ctx.index
        assert graph is not None
        graph.original = run.original_query
        filters: list[tantivy.Query] = []
        hidden: list[str] = []
        pins: dict[str, int] = {}
        taken: set[int] = set()
        for rule in run.fired:
            done = []
            for action in rule.actions:
                try:
                    if isinstance(action, FilterAction):
                        for spec in action.filters:
                            query, applied = filter_clause(index, spec)
                            applied.source = "rule"
                            filters.append(query)
                            graph.filters.append(applied)
                            ctx.retrieval.filters.append(
                                spec
                            )  # the shopper's own filter wins over extraction
                            attr = index.attribute(spec.field)
                            if attr is not None and attr.type is AttributeType.category_path:
                                level = min(str(v).count(PATH_SEP) for v in applied.values) + 1
                                ctx.retrieval.category_level[attr.name] = level
                    elif isinstance(action, BoostAction):
                        query = _all([filter_clause(index, spec)[0] for spec in action.condition])
                        sign = 1.0 if action.type == "boost" else -1.0
                        ctx.merchandising.boosts.append((query, sign * action.weight))
                    elif isinstance(action, HideAction):
                        hidden += [p for p in action.productIds if p in index.ord_by_id]
                    elif isinstance(action, RedirectAction):
                        ctx.merchandising.redirect = ctx.merchandising.redirect or action.url
                    elif isinstance(action, PinAction):
                        for item in sorted(action.items, key=lambda i: i.position):
                            if item.productId in pins or item.productId not in index.ord_by_id:
                                continue
                            position = item.position
                            while position in taken:  # a higher-priority rule holds it: next free one
                                position += 1
                            taken.add(position)
                            pins[item.productId] = position
                except AisleError as exc:  # the catalog's attributes changed since the rule was saved
                    log.warning("rule %s: action %s skipped: %s", rule.id, action.type, exc.message)
                    continue
                done.append(action.model_dump(mode="json"))
            graph.rules.append({"id": rule.id, "name": rule.name, "version": rule.version, "actions": done})
        if filters:
            combined = _all(filters)
            ctx.retrieval.filter_query = (
                combined
                if ctx.retrieval.filter_query is None
                else _all([ctx.retrieval.filter_query, combined])
            )
        hidden_set = set(hidden)
        if hidden_set:
            exclude = ids_query(index.schema, sorted(hidden_set))
            ctx.merchandising.exclude_query = (
                exclude
                if ctx.merchandising.exclude_query is None
                else _any([ctx.merchandising.exclude_query, exclude])
            )
        pins = {pid: pos for pid, pos in pins.items() if pid not in hidden_set}
        if pins:
            self._plan_pins(ctx, pins)
        return ctx

    @staticmethod
    def _plan_pins(ctx: SearchContext, pins: dict[str, int]) -> None:
        """Keep the pins passing the filters, plan them on the page, take them out of the organic results."""
        index = ctx.index
        ids = sorted(pins)
        pinned = ids_query(index.schema, ids)
        if ctx.retrieval.filter_query is not None:
            found = index.searcher.search(_all([pinned, ctx.retrieval.filter_query]), len(ids))
            product_ids = index.product_ids()
            ids = [product_ids[o] for o in index.ords(found.hits)]
            if not ids:
                return
            pinned = ids_query(index.schema, ids)
        placed = tuple(sorted((pins[pid], index.ord_by_id[pid]) for pid in ids))
        ctx.merchandising.pins = PinPlan(ctx.query.offset, ctx.query.size, placed, pinned)
        ctx.merchandising.exclude_query = (
            pinned
            if ctx.merchandising.exclude_query is None
            else _any([ctx.merchandising.exclude_query, pinned])
        )


class PinProducts:
    """Places the pinned products on the page (after ``Retrieve``), see :mod:`aisle.search.paging`."""

    def run(self, ctx: SearchContext) -> SearchContext:
        plan = ctx.merchandising.pins
        if plan is None:
            return ctx
        ctx.output.hits, ctx.output.total = plan.place(
            ctx.output.hits, ctx.output.total
        )  # ctx.output.total: the organic matches
        if ctx.retrieval.match_query is not None:
            ctx.retrieval.match_query = _any(
                [ctx.retrieval.match_query, plan.pinned_query]
            )  # facets count pinned products
        return ctx
