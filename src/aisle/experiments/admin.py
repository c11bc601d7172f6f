"""Managing a tenant's A/B experiments: the one front door for both surfaces.

:class:`ExperimentAdmin` saves an experiment (checked against the tenant), starts, stops and promotes
it, lists its versions, and reads its results and the sample size it needs. What a variant changes
belongs to the surface it changes, so the admin holds one :class:`Promotion` per surface, given by
whoever builds it: search's (:class:`~aisle.search.experiment_promotion.SearchPromotion`: the stored
rules, saved ranker versions and ``global_configuration`` settings) and recs'
(:class:`~aisle.recs.serving.experiments.ContainerPromotion`: the containers). Each checks a variant's
changes against the tenant on save and makes them the live setting on promotion. Results come from a
:class:`ResultsSource`: the analytics engine reads each variant's visitors from its log and hands them
to :func:`~aisle.experiments.analysis.analyse`. Experiments sit below search, recs and analytics in
the layers, so the admin reaches them only through these two Protocols, given by the service.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from aisle.core.errors import AisleError, BadRequest, ErrorCode
from aisle.core.tenancy import Tenants
from aisle.experiments.model import Changes, Experiment, ExperimentBody
from aisle.experiments.statistics import sample_size
from aisle.experiments.store import ExperimentStore


class ExperimentInvalid(BadRequest):
    code = ErrorCode.EXPERIMENT_INVALID


@dataclass(frozen=True)
class Refusal:
    """Why a tenant cannot serve a variant's changes: ``message`` (without the variant, which the
    admin names) and ``details`` (added to the error's details after ``variant``)."""

    message: str
    details: dict[str, Any] = field(default_factory=dict)


class Promotion(Protocol):
    """One surface's live setting as an experiment's variants change it."""

    def check(self, tenant: str, changes: Changes) -> Refusal | None:
        """The first of ``changes`` the tenant cannot serve (None: it can serve them all)."""
        ...

    def apply(self, tenant: str, changes: Changes) -> None:
        """Make this surface's part of ``changes`` the tenant's live setting (new versions, so a
        concurrent edit gets its usual version conflict)."""
        ...


class ResultsSource(Protocol):
    """Where an experiment's results are read from (the analytics engine, from its log)."""

    def experiment_results(self, tenant: str, experiment: Experiment) -> dict[str, Any]:
        """``experiment``'s results from its start to its stop (or now): the body of
        :func:`~aisle.experiments.analysis.analyse` plus ``experimentId``, ``status``, ``simulated``."""
        ...


def sample_plan(baseline: float, mde: float, weights: Sequence[float]) -> dict[str, float | int]:
    """Before a test starts: visitors a two-sided test at alpha 0.05 with power 0.8 needs to see a
    relative lift ``mde`` of a conversion rate ``baseline``
    (:func:`~aisle.experiments.statistics.sample_size`), over variants of traffic ``weights`` (the
    smallest share decides the total).

    Returns ``{baseline, minimumDetectableEffect, visitorsPerVariant, visitorsTotal}``.

    Raises:
        BadRequest ``baseline_invalid`` (400): ``baseline`` not in (0, 1) or no detectable effect.
    """
    try:
        per_variant = sample_size(baseline, mde)
    except ValueError as exc:
        raise BadRequest(str(exc), code=ErrorCode.BASELINE_INVALID) from exc
    share = min(weights) / sum(weights)
    return {
        "baseline": baseline,
        "minimumDetectableEffect": mde,
        "visitorsPerVariant": per_variant,
        "visitorsTotal": math.ceil(per_variant / share),
    }


class ExperimentAdmin:
    """Experiments of every tenant of one bucket (see the module docstring).

    Args:
        tenants: the bucket's tenants.
        promotions: one per surface whose changes are checked and promoted; a surface left out is
            neither checked nor made live on promotion (only recorded).
        results: where results are read from (None: this process reads no results).
    """

    def __init__(
        self,
        tenants: Tenants,
        promotions: Sequence[Promotion] = (),
        results: ResultsSource | None = None,
    ) -> None:
        self.tenants = tenants
        self.promotions = tuple(promotions)
        self.source = results

    def store(self, tenant: str) -> ExperimentStore:
        """The tenant's experiments. Raises TenantNotFound (404) for an unknown tenant."""
        self.tenants.config(tenant)
        return ExperimentStore(self.tenants.scope(tenant))

    def get(self, tenant: str, exp_id: str) -> Experiment:
        """One experiment. Raises TenantNotFound, ExperimentNotFound (404)."""
        return self.store(tenant).get(exp_id)

    def experiments(self, tenant: str) -> list[Experiment]:
        """The tenant's experiments, newest first. Raises TenantNotFound (404)."""
        return self.store(tenant).list()

    def history(self, tenant: str, exp_id: str) -> list[tuple[int, Experiment | None]]:
        """Every version of an experiment, newest first, as ``(version, experiment)`` (None: deleted).
        Raises TenantNotFound, ExperimentNotFound (404)."""
        store = self.store(tenant)
        store.get(exp_id)
        return [
            (n, None if body is None else Experiment.model_validate(body))
            for n, body in reversed(store.log.revisions(exp_id))
        ]

    def check(self, tenant: str, body: ExperimentBody) -> None:
        """Raise ExperimentInvalid (400) naming the first variant change the tenant cannot serve."""
        self.tenants.config(tenant)
        for i, variant in enumerate(body.variants):
            where = f"variants[{i}] ({variant.id})"
            changes = variant.changes
            for promotion in self.promotions:
                refused = promotion.check(tenant, changes)
                if refused is not None:
                    raise ExperimentInvalid(
                        f"{where}: {refused.message}", details={"variant": variant.id, **refused.details}
                    )
            if body.surface == "recommendations" and changes.changes_search():
                raise ExperimentInvalid(
                    f"{where}: a recommendations experiment changes containers only",
                    details={"variant": variant.id},
                )
            if body.surface == "search" and changes.containers:
                raise ExperimentInvalid(
                    f"{where}: a search experiment cannot change containers", details={"variant": variant.id}
                )

    def create(self, tenant: str, body: ExperimentBody, *, simulated: bool = False) -> Experiment:
        """Check and store a draft (see :meth:`check`)."""
        store = self.store(tenant)
        self.check(tenant, body)
        return store.create(body, simulated=simulated)

    def replace(self, tenant: str, exp_id: str, body: ExperimentBody, version: int) -> Experiment:
        """Check and replace a draft (409 ``experiment_state_conflict`` once started)."""
        store = self.store(tenant)
        self.check(tenant, body)
        return store.replace(exp_id, body, version)

    def start(self, tenant: str, exp_id: str) -> Experiment:
        """Start a draft: searches and predictions apply it from the next request."""
        return self.store(tenant).transition(exp_id, "started", "running", ("draft",))

    def stop(self, tenant: str, exp_id: str) -> Experiment:
        """Stop a running experiment: every visitor gets the live setting again."""
        return self.store(tenant).transition(exp_id, "stopped", "stopped", ("running",))

    def promote(self, tenant: str, exp_id: str, variant_id: str) -> Experiment:
        """Make ``variant_id``'s changes the live setting (each surface's :class:`Promotion`) and end
        the experiment.

        Raises:
            ExperimentNotFound (404); ExperimentStateConflict (409): still a draft, or already
            promoted; ExperimentInvalid (400): no such variant.
        """
        store = self.store(tenant)
        experiment = store.get(exp_id)
        variant = experiment.variant(variant_id)
        if variant is None:
            raise ExperimentInvalid(
                f"experiment '{exp_id}' has no variant '{variant_id}'", details={"variant": variant_id}
            )
        if experiment.status in ("running", "stopped"):
            for promotion in self.promotions:
                promotion.apply(tenant, variant.changes)
        return store.transition(exp_id, "promoted", "promoted", ("running", "stopped"), variant=variant_id)

    def sample_size(self, tenant: str, baseline: float, mde: float, variants: int) -> dict[str, float | int]:
        """:func:`sample_plan` for ``variants`` equal weights. Raises TenantNotFound (404),
        BadRequest ``baseline_invalid`` (400)."""
        self.tenants.config(tenant)
        return sample_plan(baseline, mde, [1.0] * variants)

    def results(self, tenant: str, exp_id: str) -> dict[str, Any]:
        """The results of an experiment (see :meth:`results_of`). Raises TenantNotFound,
        ExperimentNotFound (404)."""
        return self.results_of(tenant, self.get(tenant, exp_id))

    def results_of(self, tenant: str, experiment: Experiment) -> dict[str, Any]:
        """``experiment``'s results: its visitors from the log, then the statistics, with the sample
        the primary metric needs (``sampleSize``, :func:`~aisle.experiments.analysis.planned_sample`).
        Formulas: docs/experiments.md.

        Raises:
            AisleError (500): the admin was built without a :class:`ResultsSource`.
        """
        if self.source is None:
            raise AisleError("this process reads no experiment results (no results source)")
        return self.source.experiment_results(tenant, experiment)
