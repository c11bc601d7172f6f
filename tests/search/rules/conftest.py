"""The fashion demo index, and a search pipeline whose rules come from a fixed list."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from aisle.core.tenancy import TenantConfig, Tenants
from aisle.search.index.reader import TenantIndex
from aisle.search.indexes import IndexRegistry
from aisle.search.model import SearchResult
from aisle.search.pipeline import SearchPipeline, default_stages
from aisle.search.query import SearchQuery
from aisle.search.rules.book import RuleBook
from aisle.search.rules.model import Rule
from aisle.search.stages.rules import FixedRules

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def _make_rule(rule_id: str = "r1", **fields: Any) -> Rule:
    doc = {"name": rule_id, "id": rule_id, "version": 1, "createdAt": NOW, "updatedAt": NOW, **fields}
    return Rule.model_validate(doc)


@pytest.fixture
def make_rule() -> Callable[..., Rule]:
    """``make_rule(id, **json_fields)``: a rule (name and timestamps filled in)."""
    return _make_rule


@pytest.fixture(scope="session")
def fashion(demo_env: Any) -> tuple[TenantIndex, TenantConfig]:
    tenants = Tenants(demo_env.store)
    return IndexRegistry(tenants, demo_env.data_dir).get("fashion"), tenants.config("fashion")


Search = Callable[..., SearchResult]


@pytest.fixture
def search(fashion: tuple[TenantIndex, TenantConfig]) -> Search:
    """``search(query, rules=[...], now=NOW, **kwargs)``: the default pipeline with these rules."""
    index, config = fashion

    def run(query: str, rules: list[Rule] | None = None, now: datetime = NOW, **kwargs: Any) -> SearchResult:
        stages = default_stages(rules=FixedRules(RuleBook(rules or [])), clock=lambda: now)
        return SearchPipeline(stages).search(index, config, SearchQuery(query, **kwargs))

    return run
