"""What an experiment variant changes in a search: configuration merged, rules switched, ranker pinned,
several experiments combined, and derived values reused until the live ones change."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.experiments.assignment import assign
from aisle.experiments.model import Experiment
from aisle.search.experiments import SearchArms
from aisle.search.rules.book import RuleBook
from aisle.search.rules.model import Rule

NOW = datetime(2026, 11, 26, tzinfo=UTC)


def experiment(exp_id: str, changes: dict[str, Any], surface: str = "search") -> Experiment:
    return Experiment.model_validate(
        {
            "name": exp_id,
            "id": exp_id,
            "version": 1,
            "salt": f"salt-{exp_id}",
            "createdAt": NOW,
            "updatedAt": NOW,
            "status": "running",
            "surface": surface,
            "variants": [{"id": "control"}, {"id": "b", "changes": changes}],
        }
    )


class Fixed:
    def __init__(self, *experiments: Experiment) -> None:
        self.experiments = experiments

    def running(self, tenant: str) -> tuple[Experiment, ...]:
        return self.experiments


def rule(rule_id: str, enabled: bool) -> Rule:
    return Rule.model_validate(
        {
            "id": rule_id,
            "version": 1,
            "createdAt": NOW,
            "updatedAt": NOW,
            "name": rule_id,
            "enabled": enabled,
            "conditions": {"query": {"match": "contains", "value": "shoes"}},
            "actions": [{"type": "hide", "productIds": ["1"]}],
        }
    )


class Books:
    def __init__(self) -> None:
        self.live = RuleBook([rule("on", True), rule("off", False)])

    def book(self, tenant: str) -> RuleBook:
        return self.live


def visitor_in(exp: Experiment, variant: str, also: Experiment | None = None, other: str = "b") -> str:
    return next(
        v
        for v in (f"v{i}" for i in range(10_000))
        if assign(exp, v).id == variant and (also is None or assign(also, v).id == other)
    )


def test_a_variant_changes_settings_rules_and_ranker(demo_env: Any) -> None:
    config = Tenants(open_blob_store(demo_env.storage_url)).config("fashion")
    exp = experiment(
        "e1",
        {
            "hybrid": {"enabled": False, "blendWeight": 0.5},
            "settings": {"stages": {"min_hits": 3}},
            "rulesOff": ["on"],
            "rulesOn": ["off"],
            "ranker": 4,
        },
    )
    books = Books()
    arms = SearchArms(Fixed(exp), books, clock=lambda: NOW)
    assert arms.arm("fashion", config, None) is None  # no visitor: outside the test, live setting
    control = arms.arm("fashion", config, visitor_in(exp, "control"))
    assert control is not None and control.served == (("e1", "control"),)
    assert control.config is config and control.rules is None and control.ranker is None
    b = arms.arm("fashion", config, visitor_in(exp, "b"))
    assert b is not None and b.served == (("e1", "b"),)
    hybrid = b.config.global_.hybrid
    assert (hybrid.enabled, hybrid.blend_weight, b.config.global_.stages.min_hits) == (False, 0.5, 3)
    assert b.config.global_.stages.typo == config.global_.stages.typo  # untouched settings kept
    assert config.global_.hybrid.blend_weight != 0.5  # the live configuration is not changed
    assert b.rules is not None and [r.id for r in b.rules.book.rules] == ["off"] and b.rules.at == NOW
    assert b.ranker == 4 and b.config.global_.ranking.enabled
    again = arms.arm("fashion", config, visitor_in(exp, "b"))
    assert again is not None and again.config is b.config and again.rules.book is b.rules.book  # type: ignore[union-attr]
    books.live = RuleBook([rule("on", True)])  # the live rules changed: derived again
    changed = arms.arm("fashion", config, visitor_in(exp, "b"))
    assert changed is not None and changed.rules is not None and changed.rules.book.rules == []


def test_two_experiments_combine_and_recommendation_tests_leave_search_alone(demo_env: Any) -> None:
    config = Tenants(open_blob_store(demo_env.storage_url)).config("fashion")
    first = experiment("e1", {"ranker": "none"})
    second = experiment("e2", {"settings": {"stages": {"min_hits": 7}}})
    recs = experiment("e3", {"containers": {"c1": {"slots": {"0": "m2"}}}}, surface="recommendations")
    arms = SearchArms(Fixed(first, second, recs), Books())
    visitor = visitor_in(first, "b", also=second, other="b")
    arm = arms.arm("fashion", config, visitor)
    assert arm is not None and arm.served == (("e1", "b"), ("e2", "b"))
    assert not arm.config.global_.ranking.enabled and arm.config.global_.stages.min_hits == 7
    assert arm.ranker is None
