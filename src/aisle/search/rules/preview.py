"""Run one search with and without a rule, and say what the rule changed (for merchandisers).

Both searches are the live search (:meth:`aisle.search.engine.SearchEngine.preview`): the same stages,
hybrid retrieval, learned ranker, fallback and deadline, with only the rule set swapped for that one
call (:class:`~aisle.search.rules.book.RuleDraft`), so the "without" page is what shoppers see now.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from aisle.search.model import SearchResult
from aisle.search.rules.book import RuleBook, RuleDraft
from aisle.search.rules.model import Rule

LiveSearch = Callable[[RuleDraft], SearchResult]
"""The live search of the previewed request, run with the given rule set in place of the live one."""


@dataclass
class Preview:
    without_rule: SearchResult
    with_rule: SearchResult
    changes: dict[str, Any]


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
    search: LiveSearch,
    *,
    offset: int = 0,
    replaces: str | None = None,
    at: datetime | None = None,
) -> Preview:
    """Search with the live rules minus ``replaces`` (and minus ``rule.id``), then with ``rule`` added.

    ``rule`` counts as enabled; time windows are checked at ``at`` (default: now, UTC); ``offset`` is
    the searched page's (for 1-based positions). Raises what the search raises (BadRequest for bad
    filters or facets).
    """
    at = at or datetime.now(UTC)
    base = live.without(replaces) if replaces else live
    base = base.without(rule.id)
    rule = rule.model_copy(update={"enabled": True})
    without_rule = search(RuleDraft(base, at))
    with_rule = search(RuleDraft(base.with_rule(rule), at))
    changes = diff_pages(without_rule, with_rule, offset)
    changes["fired"] = any(r["id"] == rule.id for r in with_rule.query_graph.rules)
    return Preview(without_rule, with_rule, changes)
