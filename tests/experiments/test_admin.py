"""The experiments front door: a variant checked by each surface and refused with the variant named,
promoted through every surface, results read from the source."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from tests.support.recs import write_tenant

from aisle.core.errors import AisleError, BadRequest, ErrorCode, TenantNotFound
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.experiments.admin import ExperimentAdmin, ExperimentInvalid, Refusal, sample_plan
from aisle.experiments.model import Changes, Experiment, ExperimentBody
from aisle.experiments.store import ExperimentStateConflict

PRODUCTS = pl.DataFrame({"id": ["p0", "p1"], "title": ["Red shoe", "Blue bag"]})


class Recorded:
    """A surface that refuses rule ``bad`` and records what it was asked to make live."""

    def __init__(self) -> None:
        self.applied: list[tuple[str, Changes]] = []

    def check(self, tenant: str, changes: Changes) -> Refusal | None:
        if "bad" in changes.rulesOff:
            return Refusal(f"no rule bad in tenant '{tenant}'", {"rules": ["bad"]})
        return None

    def apply(self, tenant: str, changes: Changes) -> None:
        self.applied.append((tenant, changes))


class Results:
    """A results source answering a fixed control conversion rate."""

    def __init__(self, control_rate: float | None) -> None:
        self.control_rate = control_rate

    def experiment_results(self, tenant: str, experiment: Experiment) -> dict[str, Any]:
        rate = {"value": self.control_rate}
        return {
            "experimentId": experiment.id,
            "variants": [{"conversionRate": rate}, {"conversionRate": rate}],
        }


@pytest.fixture
def tenants(tmp_path: Path) -> Tenants:
    store = open_blob_store(f"file://{tmp_path / 'bucket'}")
    write_tenant(store, "shop", PRODUCTS)
    return Tenants(store, ttl=0)


def body(changes: dict[str, Any], surface: str = "search") -> ExperimentBody:
    return ExperimentBody.model_validate(
        {"name": "x", "surface": surface, "variants": [{"id": "control"}, {"id": "b", "changes": changes}]}
    )


def test_a_refused_change_names_its_variant_and_nothing_is_stored(tenants: Tenants) -> None:
    admin = ExperimentAdmin(tenants, [Recorded()])
    with pytest.raises(ExperimentInvalid) as refused:
        admin.create("shop", body({"rulesOff": ["bad"]}))
    assert str(refused.value) == "variants[1] (b): no rule bad in tenant 'shop'"
    assert refused.value.details == {"variant": "b", "rules": ["bad"]}
    assert refused.value.code == ErrorCode.EXPERIMENT_INVALID and refused.value.status == 400
    with pytest.raises(ExperimentInvalid, match="changes containers only"):
        admin.create("shop", body({"rulesOff": ["fine"]}, surface="recommendations"))
    with pytest.raises(ExperimentInvalid, match="cannot change containers"):
        admin.create("shop", body({"containers": {"c1": {"rulesOff": ["*"]}}}))
    assert admin.experiments("shop") == []
    with pytest.raises(TenantNotFound):
        admin.create("nobody", body({}))


def test_promotion_goes_through_every_surface_once_the_experiment_ran(tenants: Tenants) -> None:
    search, recs = Recorded(), Recorded()
    admin = ExperimentAdmin(tenants, [recs, search])
    draft = admin.create("shop", body({"rulesOff": ["fine"]}))
    with pytest.raises(ExperimentStateConflict):
        admin.promote("shop", draft.id, "b")  # a draft is not promoted
    with pytest.raises(ExperimentInvalid, match="no variant 'c'"):
        admin.promote("shop", draft.id, "c")
    assert search.applied == [] and recs.applied == []
    admin.start("shop", draft.id)
    promoted = admin.promote("shop", draft.id, "b")
    assert promoted.status == "promoted" and promoted.promotedVariant == "b"
    assert [(t, c.rulesOff) for t, c in search.applied] == [("shop", ["fine"])]
    assert recs.applied == search.applied
    history = admin.history("shop", draft.id)
    assert [n for n, _ in history] == [3, 2, 1]
    assert [h.action for h in history[0][1].history] == ["created", "started", "promoted"]  # type: ignore[union-attr]
    assert admin.get("shop", draft.id) == promoted


def test_results_are_the_sources(tenants: Tenants) -> None:
    """The source's body as it is: the sample the primary metric needs is the analysis's
    (``planned_sample``, tests/experiments/test_statistics.py), not a conversion-rate one added here."""
    draft = ExperimentAdmin(tenants).create("shop", body({}))
    with pytest.raises(AisleError, match="no results source"):
        ExperimentAdmin(tenants).results("shop", draft.id)
    results = ExperimentAdmin(tenants, results=Results(0.1)).results("shop", draft.id)
    assert results == Results(0.1).experiment_results("shop", draft)


def test_a_draft_is_planned_with_sample_plan() -> None:
    plan = sample_plan(0.1, 0.05, [0.25, 0.75])
    assert plan["visitorsTotal"] == 4 * plan["visitorsPerVariant"]  # the smallest share decides


def test_the_sample_size_is_refused_for_a_baseline_it_cannot_size(tenants: Tenants) -> None:
    admin = ExperimentAdmin(tenants)
    size = admin.sample_size("shop", 0.1, 0.05, 3)
    assert size["visitorsPerVariant"] > 50_000 and size["visitorsTotal"] == 3 * size["visitorsPerVariant"]
    with pytest.raises(BadRequest) as refused:
        admin.sample_size("shop", 0.95, 0.1, 2)
    assert refused.value.code == ErrorCode.BASELINE_INVALID
    with pytest.raises(TenantNotFound):
        admin.sample_size("nobody", 0.1, 0.05, 2)
