"""Managing a tenant's A/B experiments: save (checked against the tenant), start, stop, promote.

:class:`ExperimentAdmin` is the front door the rules service calls. A variant may only name what the
tenant has: its stored rules, its saved ranker versions, ``global_configuration`` settings that still
validate once merged. Promoting a variant makes its search changes the tenant's live setting: the
rules it switches off or on are saved disabled or enabled (new rule versions), its hybrid, ranking and
pipeline settings are written to ``global_configuration.json``, its ranker version is put in use (or
the ranker switched off for ``"none"``); a recommendations variant's container changes are written
to the containers (new versions) by ``containers``, which the rules service gives (search never
imports the recs engine).
"""

from __future__ import annotations

from typing import Protocol

from pydantic import ValidationError

from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.tenancy import Tenants
from aisle.experiments.model import Changes, ContainerChange, Experiment, ExperimentBody
from aisle.experiments.store import ExperimentStore
from aisle.search.experiments import apply_settings
from aisle.search.ranking.store import RankerStore
from aisle.search.rules.model import RuleBody
from aisle.search.rules.store import RuleStore

GLOBAL_FILE = "global_configuration.json"


class ExperimentInvalid(BadRequest):
    code = ErrorCode.EXPERIMENT_INVALID


class ContainerChanges(Protocol):
    """Makes container changes live (the recs engine's
    :class:`~aisle.recs.serving.experiments.ContainerPromotion`, given by the service)."""

    def apply(self, tenant: str, changes: dict[str, ContainerChange]) -> None: ...


class ExperimentAdmin:
    """Experiments of every tenant of one bucket (``tenants``), with its ``rankers``; ``containers``
    promotes a recommendations variant's container changes (None: not promoted, only recorded)."""

    def __init__(
        self, tenants: Tenants, rankers: RankerStore, containers: ContainerChanges | None = None
    ) -> None:
        self.tenants = tenants
        self.rankers = rankers
        self.containers = containers

    def store(self, tenant: str) -> ExperimentStore:
        """The tenant's experiments. Raises TenantNotFound (404) for an unknown tenant."""
        self.tenants.config(tenant)
        return ExperimentStore(self.tenants.scope(tenant))

    def check(self, tenant: str, body: ExperimentBody) -> None:
        """Raise ExperimentInvalid (400) naming the first variant change the tenant cannot serve."""
        config = self.tenants.config(tenant)
        rule_ids = {r.id for r in RuleStore(self.tenants.scope(tenant)).list()}
        versions = {r.version for r in self.rankers.versions(tenant)}
        for i, variant in enumerate(body.variants):
            where = f"variants[{i}] ({variant.id})"
            changes = variant.changes
            unknown = sorted(set(changes.rulesOff + changes.rulesOn) - rule_ids)
            if unknown:
                raise ExperimentInvalid(
                    f"{where}: no rule {', '.join(unknown)} in tenant '{tenant}'",
                    details={"variant": variant.id, "rules": unknown},
                )
            if isinstance(changes.ranker, int) and changes.ranker not in versions:
                raise ExperimentInvalid(
                    f"{where}: tenant '{tenant}' has no ranker version {changes.ranker}",
                    details={"variant": variant.id, "ranker": changes.ranker},
                )
            try:
                apply_settings(config.global_, changes)
            except ValidationError as exc:
                err = exc.errors()[0]
                field = ".".join(str(p) for p in err["loc"])
                raise ExperimentInvalid(
                    f"{where}: setting '{field}': {err['msg']}",
                    details={"variant": variant.id, "field": field},
                ) from exc
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
        """Make ``variant_id``'s changes the live setting and end the experiment.

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
            self._make_live(tenant, variant.changes)
        return store.transition(exp_id, "promoted", "promoted", ("running", "stopped"), variant=variant_id)

    def _make_live(self, tenant: str, changes: Changes) -> None:
        if changes.containers and self.containers is not None:
            self.containers.apply(tenant, changes.containers)
        rules = RuleStore(self.tenants.scope(tenant))
        for rule in rules.list():
            enabled = False if rule.id in changes.rulesOff else True if rule.id in changes.rulesOn else None
            if enabled is not None and enabled != rule.enabled:
                body = RuleBody.model_validate(
                    {
                        **rule.model_dump(exclude={"id", "version", "createdAt", "updatedAt"}),
                        "enabled": enabled,
                    }
                )
                rules.replace(rule.id, body, rule.version)
        config = self.tenants.config(tenant)
        merged = apply_settings(config.global_, changes)
        if changes.ranker == "none":
            merged = merged.model_copy(update={"ranking": config.global_.ranking})  # ranker off, not ranking
            self.rankers.use(tenant, None)
        elif isinstance(changes.ranker, int):
            self.rankers.use(tenant, changes.ranker)
        if merged != config.global_:
            self.tenants.write_config(tenant, {GLOBAL_FILE: merged})
