"""What the merchandising stages of one search share (``SearchContext.merchandising.rules``)."""

from __future__ import annotations

from dataclasses import dataclass

from aisle.search.rules.model import Rule


@dataclass
class RuleRun:
    """The rules that fired for this request (highest priority first) and the query before a rewrite."""

    original_query: str
    fired: list[Rule]
