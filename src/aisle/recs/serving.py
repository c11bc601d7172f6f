"""The predict engine: routes a request by container, runs its slots and shapes the items.

No HTTP here (services -> engines -> core): the predict service parses the request into a
:class:`PredictQuery`, calls :meth:`PredictEngine.predict` and renders :class:`ItemOut` values.
Per request the engine reads the container (cached <= ``AISLE_CONTAINER_CACHE_SECONDS``, default 2 s:
see :mod:`aisle.recs.serving_containers`), the deployment state (cached <= 1 s), the catalog pointer
(cached <= 1 s) and the visitor's events.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from aisle.catalog.store import CatalogNotFound, CatalogStore
from aisle.core.errors import AisleError, BadRequest
from aisle.core.events import Event, EventStore
from aisle.core.storage import PrefixBlobStore
from aisle.core.tenancy import TenantConfig, Tenants
from aisle.recs.containers import Container, ContainerStore, SlotConfig
from aisle.recs.deployments import Deployments
from aisle.recs.diversity import DiversityLevel
from aisle.recs.serving_containers import ContainerCache
from aisle.recs.serving_models import ModelSource, ServedModel
from aisle.recs.serving_products import ProductTable
from aisle.recs.serving_rank import (
    Personal,
    PredictAction,
    Ranked,
    RankOptions,
    compile_actions,
    rank_slot,
)

log = logging.getLogger("aisle.predict")
PURCHASE_TYPES = frozenset({"purchase", "transaction", "order"})
USER_HISTORY_PREFIX = "user:"
"""Events carrying a ``userId`` are also kept under visitor ``user:<userId>`` (the user's history)."""
CATALOG_TTL_S = 1.0
CONFIG_TTL_S = 2.0


def record_events(store: EventStore, tenant: str, events: Sequence[Event]) -> int:
    """Store visitor events; those with a ``userId`` are also kept as that user's history (one batch).

    Returns the number of events accepted (not counting the history copies).
    """
    history = [
        dataclasses.replace(e, visitor_id=USER_HISTORY_PREFIX + e.user_id) for e in events if e.user_id
    ]
    store.append(tenant, [*events, *history])
    return len(events)


@dataclass(frozen=True)
class PredictParams:
    """``predictParams`` of the spec, parsed."""

    return_product: bool = False
    return_score: bool = True
    strict_filtering: bool = False
    diversity_level: DiversityLevel | None = None
    debug: bool = False


@dataclass(frozen=True)
class PredictQuery:
    container_id: str
    seeds: Sequence[str]
    model_ids: Sequence[str] | None = None
    visitor_id: str | None = None
    user_id: str | None = None
    actions: Sequence[PredictAction] = ()
    params: PredictParams = field(default_factory=PredictParams)


@dataclass
class ItemOut:
    """One RecommendationItem (spec): product fields only with ``returnProduct``."""

    id: str
    score: float | None = None
    label: str | None = None
    name: str | None = None
    description: str | None = None
    price: float | None = None
    explanation: dict[str, Any] | None = None


class NotWarm(Exception):
    """Raised by ``predict(..., warm_only=True)`` when answering needs I/O beyond local file reads
    (a model or catalog to load, configuration to refresh, events to read): rerun it in a thread."""


@dataclass
class _Tenant:
    scope: PrefixBlobStore
    containers: ContainerStore
    catalog: CatalogStore
    table: ProductTable | None = None
    checked_at: float = 0.0


class PredictEngine:
    """Serves every tenant of one object store. Thread-safe; one per predict process.

    Args:
        tenants: tenant lookup (raises TenantNotFound).
        events: visitor events and user features.
        models: where loaded models come from.
        containers: the containers read recently (default: a :class:`ContainerCache` of 2 s); a
            container edit is seen by this engine at most its ``ttl_s`` seconds after it is written.
    """

    def __init__(
        self,
        tenants: Tenants,
        events: EventStore,
        models: ModelSource,
        *,
        containers: ContainerCache | None = None,
    ) -> None:
        self.tenants = tenants
        self.events = events
        self.models = models
        self.containers = containers if containers is not None else ContainerCache()
        self._state: dict[str, _Tenant] = {}
        self._configs: dict[str, tuple[float, TenantConfig]] = {}
        self._lock = threading.Lock()

    # ---- tenant resources -------------------------------------------------------------------
    def tenant(self, tenant: str, *, warm_only: bool = False) -> tuple[TenantConfig, _Tenant]:
        """Raises TenantNotFound (404); NotWarm when ``warm_only`` and the configuration is stale."""
        now = time.monotonic()
        hit = self._configs.get(tenant)
        if hit is not None and now - hit[0] < CONFIG_TTL_S:
            config = hit[1]
        elif warm_only:
            raise NotWarm(tenant)
        else:
            config = self.tenants.config(tenant)
            self._configs[tenant] = (now, config)
        state = self._state.get(tenant)
        if state is None:
            with self._lock:
                state = self._state.get(tenant)
                if state is None:
                    scope = self.tenants.scope(tenant)
                    state = self._state[tenant] = _Tenant(scope, ContainerStore(scope), CatalogStore(scope))
        return config, state

    def table(self, config: TenantConfig, state: _Tenant, *, warm_only: bool = False) -> ProductTable:
        """The tenant's current catalog as a :class:`ProductTable` (empty when it has no catalog)."""
        now = time.monotonic()
        if state.table is not None and now - state.checked_at < CATALOG_TTL_S:
            return state.table
        if warm_only:
            raise NotWarm("catalog")
        version = state.catalog.current_version()
        if state.table is None or state.table.version != (version or ""):
            try:
                catalog = state.catalog.load(version) if version else None
            except CatalogNotFound:
                catalog = None
            roles = {a.role.value: a.name for a in config.attributes.attributes if a.role is not None}
            if catalog is None:
                import polars as pl

                state.table = ProductTable.from_frame("", pl.DataFrame({"id": []}, schema={"id": pl.Utf8}))
            else:
                state.table = ProductTable.from_frame(catalog.version, catalog.products, roles)
        state.checked_at = now
        return state.table

    def personal(self, tenant: str, config: TenantConfig, table: ProductTable, q: PredictQuery) -> Personal:
        """Session and purchases of ``visitorId``, brand affinity of ``userId`` (features, else history)."""
        p = config.user_groups.personalization
        if not p.enabled or not (q.visitor_id or q.user_id):
            return Personal()
        session: tuple[str, ...] = ()
        purchased: frozenset[str] = frozenset()
        if q.visitor_id and p.session_events > 0:
            recent = self.events.recent(tenant, q.visitor_id, limit=p.session_events)
            session = tuple(e.product_id for e in reversed(recent))
            purchased = frozenset(e.product_id for e in recent if e.event_type in PURCHASE_TYPES)
        affinity: dict[str, float] = {}
        if q.user_id and p.brand_affinity_weight > 0:
            affinity = self._brand_affinity(tenant, q.user_id, table)
        return Personal(session, purchased, affinity, p.brand_affinity_weight)

    def _brand_affinity(self, tenant: str, user_id: str, table: ProductTable) -> dict[str, float]:
        raw: dict[str, float] = {}
        features = self.events.user_features(tenant, user_id) or {}
        given = features.get("brand_affinity") or features.get("brands")
        if isinstance(given, dict):
            raw = {str(k): float(v) for k, v in given.items() if isinstance(v, int | float)}
        else:
            for e in self.events.recent(tenant, USER_HISTORY_PREFIX + user_id):
                row = table.row(e.product_id)
                brand = None if row is None else table.brand(row)
                if brand:
                    raw[str(brand)] = raw.get(str(brand), 0.0) + 1.0
        top = max((abs(v) for v in raw.values()), default=0.0)
        return {k: v / top for k, v in raw.items()} if top > 0 else {}

    def warm_deployed(self) -> int:
        """Load every deployed model of every tenant (and its catalog) ahead of traffic.

        Run by the predict service at start-up and then periodically, so a deploy made through the
        edit service is loaded before the first request needs it. Returns the number of models ready;
        a model that fails to load is logged and retried on the next pass.
        """
        ready = 0
        for tenant in self.tenants.names():
            try:
                config, state = self.tenant(tenant)
                self.table(config, state)
                model_ids = Deployments(state.scope).deployed_ids()
            except AisleError as exc:
                log.warning("warm-up of tenant %s skipped: %s", tenant, exc.message)
                continue
            for model_id in model_ids:
                try:
                    self.models.served(tenant, state.scope, model_id)
                    ready += 1
                except Exception:
                    log.exception("warm-up of model %s/%s failed", tenant, model_id)
        return ready

    # ---- predict ------------------------------------------------------------------------------
    def predict(self, tenant: str, q: PredictQuery, *, warm_only: bool = False) -> list[ItemOut]:
        """Recommendations of container ``q.container_id``.

        With ``warm_only`` the call does only CPU work and local file reads (about 1 ms) or raises
        :class:`NotWarm`, so an async route can answer inline and send cold requests to a thread.
        The container comes from :attr:`containers`, so an edit is served at most ``ttl_s`` seconds late.

        Raises:
            TenantNotFound, ContainerNotFound (404); BadRequest ``model_ids_unknown``,
            ``action_slot_unknown``, ``condition_field_unknown`` (400); ModelNotDeployed (409).
        """
        if warm_only and (q.visitor_id or q.user_id):
            raise NotWarm("personalisation")
        config, state = self.tenant(tenant, warm_only=warm_only)
        container = self._container(tenant, state, q.container_id, warm_only=warm_only)
        slots = _select_slots(container, q.model_ids)
        table = self.table(config, state, warm_only=warm_only)
        actions = compile_actions(q.actions, table, {s.slotConfigId for s in container.slotConfigurations})
        personal = self.personal(tenant, config, table, q)
        options = RankOptions(strict=q.params.strict_filtering, diversity=q.params.diversity_level)
        taken: set[str] = set()
        ranked: list[Ranked] = []
        for slot in sorted(slots, key=lambda s: s.placement):
            model = (
                self.models.cached(tenant, slot.modelId)
                if warm_only
                else self.models.served(tenant, state.scope, slot.modelId)
            )
            if model is None:
                raise NotWarm(slot.modelId)
            ranked += rank_slot(slot, model, q.seeds, table, actions, personal, taken, options)
        return [self._item(r, table, q.params, personal) for r in ranked]

    def _item(self, r: Ranked, table: ProductTable, params: PredictParams, personal: Personal) -> ItemOut:
        out = ItemOut(id=r.item_id, label=r.label)
        if params.return_score:
            out.score = round(r.score, 6)
        row = table.row(r.item_id)
        if params.return_product and row is not None:
            name = table.value(row, table.title_field)
            desc = table.value(row, table.description_field)
            price = table.value(row, table.price_field)
            out.name = None if name is None else str(name)
            out.description = None if desc is None else str(desc)
            out.price = float(price) if isinstance(price, int | float) else None
        if params.debug:
            out.explanation = {
                "modelId": r.model.model_id,
                "modelType": r.model.model_type.value,
                "modelVersion": r.model.version,
                "slotConfigId": r.slot.slotConfigId,
                "modelScore": r.model_score,
                "rules": r.rules,
                "brandAffinity": round(r.affinity, 6),
                "backfill": r.backfill is not None,
                "backfillFrom": r.backfill,
                "sessionLength": len(personal.session),
            }
        return out

    # ---- evaluation ---------------------------------------------------------------------------
    def evaluate(
        self, tenant: str, q: PredictQuery, model_type: str, model_name: str, k: int = 20
    ) -> dict[str, Any]:
        """Items of one named model (deployed or not) through the same ranking, plus its offline metrics.

        Raises ModelNotFound (404), BadRequest ``model_type_mismatch`` (400).
        """
        config, state = self.tenant(tenant)
        model = self.models.served(tenant, state.scope, model_name, require_deployed=False)
        if model.model_type.value != model_type:
            raise BadRequest(
                f"model '{model_name}' is a {model.model_type.value} model, not {model_type}",
                code="model_type_mismatch",
                details={"modelName": model_name, "modelType": model.model_type.value},
            )
        table = self.table(config, state)
        slot = SlotConfig(slotConfigId="evaluation", modelId=model_name, itemCount=k)
        actions = compile_actions(q.actions, table, {slot.slotConfigId})
        personal = self.personal(tenant, config, table, q)
        options = RankOptions(strict=q.params.strict_filtering, diversity=q.params.diversity_level)
        ranked = rank_slot(slot, model, q.seeds, table, actions, personal, set(), options)
        return {
            "modelId": model.model_id,
            "modelType": model.model_type.value,
            "modelVersion": model.version,
            "metrics": model.metrics,
            "items": [self._item(r, table, q.params, personal) for r in ranked],
        }

    def served_model(self, tenant: str, model_id: str) -> ServedModel:
        _, state = self.tenant(tenant)
        return self.models.served(tenant, state.scope, model_id)

    def container(self, tenant: str, container_id: str) -> Container:
        """The container as predict serves it (up to ``containers.ttl_s`` stale).

        Raises TenantNotFound, ContainerNotFound (404).
        """
        _, state = self.tenant(tenant)
        return self._container(tenant, state, container_id)

    def _container(
        self, tenant: str, state: _Tenant, container_id: str, *, warm_only: bool = False
    ) -> Container:
        if warm_only and self.containers.ttl_s > 0:
            # a stale entry is re-read in a thread
            container = self.containers.cached(tenant, container_id)
            if container is None:
                raise NotWarm(f"container {container_id}")
            return container
        if warm_only and not state_is_local(self, tenant):
            # with the cache off a local store is still read inline (two plain file calls); S3 is not
            raise NotWarm(f"container {container_id} on remote storage")
        return self.containers.get(tenant, state.containers, container_id)


def state_is_local(engine: PredictEngine, tenant: str) -> bool:
    """True when the tenant's storage is a local directory (its reads are cheap enough inline)."""
    return engine.tenants.store.local_path("") is not None


def _select_slots(container: Container, model_ids: Sequence[str] | None) -> list[SlotConfig]:
    if model_ids is None:
        return list(container.slotConfigurations)
    known = set(container.model_ids())
    unknown = [m for m in model_ids if m not in known]
    if unknown or not model_ids:
        raise BadRequest(
            f"modelIds not in container '{container.containerId}': {', '.join(unknown) or '(empty list)'}"
            f" (its models: {', '.join(sorted(known))})",
            code="model_ids_unknown",
            details={"unknown": unknown, "containerModels": sorted(known)},
        )
    wanted = set(model_ids)
    return [s for s in container.slotConfigurations if s.modelId in wanted]
