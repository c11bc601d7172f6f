"""Search's part of the experiments admin: a variant's search changes checked and made live.

:class:`SearchPromotion` is the :class:`~aisle.experiments.admin.Promotion` of the search surface,
given to :class:`~aisle.experiments.admin.ExperimentAdmin` by whoever builds it. A variant may only
name what the tenant has: its stored rules, its saved ranker versions, ``global_configuration``
settings that still validate once merged. Promoting a variant makes its search changes the tenant's
live setting: the rules it switches off or on are saved disabled or enabled (new rule versions), its
hybrid, ranking and pipeline settings are written to ``global_configuration.json``, its ranker version
is put in use (or the ranker switched off for ``"none"``).
"""

from __future__ import annotations

from pydantic import ValidationError

from aisle.core.tenancy import Tenants
from aisle.experiments.admin import Refusal
from aisle.experiments.model import Changes
from aisle.search.experiments import apply_settings
from aisle.search.ranking.store import RankerStore
from aisle.search.rules.model import RuleBody
from aisle.search.rules.store import RuleStore

GLOBAL_FILE = "global_configuration.json"


class SearchPromotion:
    """The search surface's live setting of every tenant of ``tenants``, with its ``rankers``."""

    def __init__(self, tenants: Tenants, rankers: RankerStore) -> None:
        self.tenants = tenants
        self.rankers = rankers

    def check(self, tenant: str, changes: Changes) -> Refusal | None:
        """The first change the tenant cannot serve: an unknown rule, an unknown ranker version, a
        setting that does not validate once merged (None: all can be served). Raises TenantNotFound
        (404)."""
        config = self.tenants.config(tenant)
        rule_ids = {r.id for r in RuleStore(self.tenants.scope(tenant)).list()}
        unknown = sorted(set(changes.rulesOff + changes.rulesOn) - rule_ids)
        if unknown:
            return Refusal(f"no rule {', '.join(unknown)} in tenant '{tenant}'", {"rules": unknown})
        if isinstance(changes.ranker, int):
            versions = {r.version for r in self.rankers.versions(tenant)}
            if changes.ranker not in versions:
                return Refusal(
                    f"tenant '{tenant}' has no ranker version {changes.ranker}", {"ranker": changes.ranker}
                )
        try:
            apply_settings(config.global_, changes)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"])
            return Refusal(f"setting '{field}': {err['msg']}", {"field": field})
        return None

    def apply(self, tenant: str, changes: Changes) -> None:
        """Make the search changes live: rules saved enabled or disabled, settings written, ranker
        version put in use. Raises RuleVersionConflict (409) when a rule was edited meanwhile."""
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
