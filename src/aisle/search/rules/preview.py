"""Run one search with and without a rule, and say what the rule changed (for merchandisers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aisle.core.tenancy import TenantConfig
from aisle.search.index.reader import TenantIndex
from aisle.search.model import FilterSpec, SearchResult, SortOrder
from aisle.search.pipeline import SearchOptions, SearchPipeline, default_stages
from aisle.search.rules.book import RuleBook
from aisle.search.rules.model import Rule
from aisle.search.stages.rules import FixedRules


@dataclass
class SearchParams:
    """The search being previewed (``SearchPipeline.search`` arguments)."""

    query: str = ""
    size: int = 20
    offset: int = 0
    filters: list[FilterSpec] = field(default_factory=list)
    facets: list[str] = field(default_factory=list)
    sort: SortOrder = "relevance"
    user_group: str | None = None

    def options(self) -> SearchOptions:
        return {
            "size": self.size,
            "offset": self.offset,
            "filters": self.filters,
            "facets": self.facets,
            "sort": self.sort,
            "user_group": self.user_group,
        }


@dataclass
class Preview:
    without_rule: SearchResult
    with_rule: SearchResult
    changes: dict[str, Any]


def _search(
    book: RuleBook, at: datetime, index: TenantIndex, config: TenantConfig, p: SearchParams
) -> SearchResult:
    pipeline = SearchPipeline(default_stages(rules=FixedRules(book), clock=lambda: at))
    return pipeline.search(index, config, p.query, **p.options())


def diff_pages(before: SearchResult, after: SearchResult, offset: int = 0) -> dict[str, Any]:
    """Products added to, removed from and moved within the page; positions 1-based overall.

    Returns ``{"added": [id], "removed": [id], "moved": [{"id", "before", "after"}], "totalBefore",
    "totalAfter", "redirectBefore", "redirectAfter"}``.
    """
    pos_before = {p["id"]: offset + i + 1 for i, p in enumerate(before.products)}
    pos_after = {p["id"]: offset + i + 1 for i, p in enumerate(after.products)}
    return {
        "added": [pid for pid in pos_after if pid not in pos_before],
        "removed": [pid for pid in pos_before if pid not in pos_after],
        "moved": [
            {"id": pid, "before": pos_before[pid], "after": pos}
            for pid, pos in pos_after.items()
            if pid in pos_before and pos_before[pid] != pos
        ],
        "totalBefore": before.total,
        "totalAfter": after.total,
        "redirectBefore": before.redirect,
        "redirectAfter": after.redirect,
    }


def preview_rule(
    live: RuleBook,
    rule: Rule,
    index: TenantIndex,
    config: TenantConfig,
    params: SearchParams,
    *,
    replaces: str | None = None,
    at: datetime | None = None,
) -> Preview:
    """Search with the live rules minus ``replaces`` (and minus ``rule.id``), then with ``rule`` added.

    ``rule`` counts as enabled; time windows are checked at ``at`` (default: now, UTC).
    Raises what the search raises (BadRequest for bad filters or facets).
    """
    at = at or datetime.now(UTC)
    base = live.without(replaces) if replaces else live
    base = base.without(rule.id)
    rule = rule.model_copy(update={"enabled": True})
    without_rule = _search(base, at, index, config, params)
    with_rule = _search(base.with_rule(rule), at, index, config, params)
    changes = diff_pages(without_rule, with_rule, params.offset)
    changes["fired"] = any(r["id"] == rule.id for r in with_rule.query_graph.rules)
    return Preview(without_rule, with_rule, changes)
