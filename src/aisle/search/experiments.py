"""Experiments in the search pipeline: which variants a visitor's search is in, and what they change.

:class:`SearchArms` resolves, for one search, the tenant's running search experiments
and the visitor's variant in each, through the one interface recs serves variants through too
(:func:`~aisle.experiments.running.visitor_variants`; no visitor id: the control, and the search is
not tagged), and the combined :class:`Arm`: the tenant configuration with the
variants' hybrid, ranking and pipeline settings merged over it, the rule book with their rules switched
off or on, and the ranker version. Changes of several experiments apply oldest experiment first.
Derived configurations and rule books are cached per variant and per live configuration and rule book,
so a search in an experiment costs a hash and a dictionary lookup.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from aisle.core.tenancy import TenantConfig
from aisle.core.tenant_config import GlobalConfiguration
from aisle.experiments.model import Changes, Experiment, Surface, Variant
from aisle.experiments.running import RunningExperiments, visitor_variants
from aisle.search.model import ExperimentVariant, SearchResult
from aisle.search.rules.book import RuleBook, RuleDraft
from aisle.search.rules.model import Rule

CACHE_SIZE = 512


@dataclass(frozen=True)
class Arm:
    """What one search runs with: ``served`` the (experimentId, variantId) pairs, ``config`` the
    configuration, ``rules`` a rule set replacing the live one (None: the live one), ``ranker`` a
    ranker version (None: the live one)."""

    served: tuple[tuple[str, str], ...]
    config: TenantConfig
    rules: RuleDraft | None = None
    ranker: int | None = None

    def tagged(self, result: SearchResult) -> SearchResult:
        """``result`` with ``queryGraph.experiments`` naming the variants served, so the logged answer
        and the events after it join to them."""
        served = self.served
        result.query_graph.experiments = [ExperimentVariant(experimentId=e, variantId=v) for e, v in served]
        return result


def merge_settings(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """``patch`` merged into ``base`` key by key (nested objects merged, anything else replaced)."""
    out = dict(base)
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_settings(out[key], value)
        else:
            out[key] = value
    return out


def apply_settings(global_: GlobalConfiguration, changes: Changes) -> GlobalConfiguration:
    """The tenant's ``global_configuration`` with a variant's hybrid, ranker and settings changes.

    Raises:
        pydantic.ValidationError: the merged settings do not validate (checked when the experiment is
            saved, so a running experiment never raises it).
    """
    data = merge_settings(global_.model_dump(by_alias=True), changes.settings)
    if changes.hybrid is not None:
        if changes.hybrid.enabled is not None:
            data["hybrid"]["enabled"] = changes.hybrid.enabled
        if changes.hybrid.blendWeight is not None:
            data["hybrid"]["blend_weight"] = changes.hybrid.blendWeight
    if changes.ranker == "none":
        data["ranking"]["enabled"] = False
    elif changes.ranker is not None:
        data["ranking"]["enabled"] = True
    return GlobalConfiguration.model_validate(data)


def apply_rules(book: RuleBook, changes: Changes) -> RuleBook:
    """``book`` without the rules switched off and with the stored, disabled rules switched on."""
    off, on = set(changes.rulesOff), set(changes.rulesOn)
    rules: list[Rule] = [r for r in book.rules if r.id not in off]
    rules += [r.model_copy(update={"enabled": True}) for r in book.disabled if r.id in on and r.id not in off]
    return RuleBook(rules, book.stamp)


class SearchArms:
    """Each search's :class:`Arm` (see the module docstring).

    Args:
        live: the running experiments per tenant.
        rules: the live rule books (a variant's rules are derived from them); None: no rules.
        clock: the current time (the instant a variant's rule set matches at).
    """

    def __init__(self, live: RunningExperiments, rules: Any = None, clock: Any = None) -> None:
        self.live = live
        self.rules = rules
        self.clock = clock or (lambda: datetime.now(UTC))
        # key -> (the live object it was derived from, the derived one): checked by identity on use
        self._configs: dict[tuple[object, ...], tuple[object, TenantConfig]] = {}
        self._books: dict[tuple[object, ...], tuple[object, RuleBook]] = {}
        self._lock = threading.Lock()

    def entry_count(self) -> int:
        """Derived configurations and rule books held."""
        return len(self._configs) + len(self._books)

    def variants(
        self, tenant: str, visitor_id: str | None, surface: Surface = "search"
    ) -> list[tuple[Experiment, Variant]]:
        """The visitor's variant in each running experiment of ``surface`` (none without a visitor id)."""
        return visitor_variants(self.live, tenant, visitor_id, surface)

    def arm(self, tenant: str, config: TenantConfig, visitor_id: str | None) -> Arm | None:
        """The arm of a search by ``visitor_id``; None outside every experiment (no visitor id, or no
        running search experiment)."""
        chosen = self.variants(tenant, visitor_id)
        if not chosen:
            return None
        served = tuple((e.id, v.id) for e, v in chosen)
        changing = [(e, v) for e, v in chosen if v.changes.changes_search()]
        if not changing:
            return Arm(served, config)
        key = tuple((e.id, e.version, v.id) for e, v in changing)
        ckey = (*key, id(config.global_))
        held = self._configs.get(ckey)
        derived = held[1] if held is not None and held[0] is config.global_ else None
        if derived is None:
            global_ = config.global_
            for _, v in changing:
                global_ = apply_settings(global_, v.changes)
            derived = TenantConfig(
                config.tenant, config.attributes, config.autocomplete, config.crs, global_, config.user_groups
            )
            self._keep(self._configs, ckey, (config.global_, derived))
        draft = None
        if self.rules is not None and any(v.changes.rulesOff or v.changes.rulesOn for _, v in changing):
            live = self.rules.book(tenant)
            bkey = (*key, id(live))
            kept = self._books.get(bkey)
            book = kept[1] if kept is not None and kept[0] is live else None
            if book is None:
                book = live
                for _, v in changing:
                    book = apply_rules(book, v.changes)
                self._keep(self._books, bkey, (live, book))
            draft = RuleDraft(book, self.clock())
        ranker = next(
            (v.changes.ranker for _, v in reversed(changing) if isinstance(v.changes.ranker, int)), None
        )
        return Arm(served, derived, draft, ranker)

    def _keep(self, cache: dict[tuple[object, ...], Any], key: tuple[object, ...], value: Any) -> None:
        with self._lock:
            if len(cache) >= CACHE_SIZE:
                cache.clear()
            cache[key] = value
