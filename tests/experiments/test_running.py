"""Running experiments per request: one interface, and search and recs serve a visitor the same variant
through it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from aisle.experiments.assignment import assign
from aisle.experiments.model import Experiment
from aisle.experiments.running import RunningExperiments, visitor_variants
from aisle.recs.containers import Container
from aisle.recs.serving.experiments import container_arm
from aisle.search.experiments import SearchArms

NOW = datetime(2026, 11, 26, tzinfo=UTC)


def experiment(exp_id: str, surface: str, changes: dict[str, Any], age_days: int = 0) -> Experiment:
    at = NOW - timedelta(days=age_days)
    return Experiment.model_validate(
        {
            "name": exp_id,
            "id": exp_id,
            "version": 1,
            "salt": f"salt-{exp_id}",
            "createdAt": at,
            "updatedAt": at,
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


OLD_SEARCH = experiment("s1", "search", {"ranker": "none"}, age_days=2)
RECS = experiment("r1", "recommendations", {"containers": {"c1": {"slots": {"0": "m2"}}}}, age_days=1)
NEW_SEARCH = experiment("s2", "search", {"settings": {"stages": {"min_hits": 7}}})
LIVE: RunningExperiments = Fixed(OLD_SEARCH, RECS, NEW_SEARCH)


def test_each_surface_gets_its_own_experiments_oldest_first_and_no_visitor_none() -> None:
    visitors = [f"v{i}" for i in range(50)]
    for visitor in visitors:
        search = visitor_variants(LIVE, "t", visitor, "search")
        assert [(e.id, v.id) for e, v in search] == [
            ("s1", assign(OLD_SEARCH, visitor).id),
            ("s2", assign(NEW_SEARCH, visitor).id),
        ]
        recs = visitor_variants(LIVE, "t", visitor, "recommendations")
        assert [(e.id, v.id) for e, v in recs] == [("r1", assign(RECS, visitor).id)]
    assert {assign(RECS, v).id for v in visitors} == {"control", "b"}  # both branches exercised
    for nobody in (None, ""):
        assert visitor_variants(LIVE, "t", nobody, "search") == []
        assert visitor_variants(LIVE, "t", nobody, "recommendations") == []


def test_search_and_recs_serve_a_visitor_the_variants_of_the_one_interface() -> None:
    container = Container.model_validate(
        {
            "containerId": "c1",
            "version": 1,
            "createdAt": NOW,
            "updatedAt": NOW,
            "slotConfigurations": [{"slotConfigId": "a", "modelId": "m1", "itemCount": 4}],
        }
    )
    arms = SearchArms(LIVE)
    seen = set()
    for visitor in (f"v{i}" for i in range(50)):
        served_search = [(e.id, v.id) for e, v in arms.variants("t", visitor)]
        assert served_search == [(e.id, v.id) for e, v in visitor_variants(LIVE, "t", visitor, "search")]
        changed, served_recs = container_arm(LIVE, "t", container, visitor)
        expected = [(e.id, v.id) for e, v in visitor_variants(LIVE, "t", visitor, "recommendations")]
        assert served_recs == expected
        variant = served_recs[0][1]
        seen.add(variant)
        assert [s.modelId for s in changed.slotConfigurations] == (["m2"] if variant == "b" else ["m1"])
    assert seen == {"control", "b"}
    assert container_arm(LIVE, "t", container, None) == (container, [])
    assert arms.variants("t", None) == []
