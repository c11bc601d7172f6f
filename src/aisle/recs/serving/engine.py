"""The predict engine: routes a request by container, runs its slots and shapes the items.

No HTTP here (services -> engines -> core): the predict service parses the request into a
:class:`~aisle.recs.serving.query.PredictQuery`, asks :meth:`PredictEngine.readiness` where it may
run, calls :meth:`PredictEngine.recommend` there and renders the
:class:`~aisle.recs.serving.items.ItemOut` values. Per request the engine reads the container (cached
<= ``AISLE_CONTAINER_CACHE_SECONDS``, default 2 s: see :mod:`aisle.recs.serving.containers`), the
deployment state (cached <= 1 s), the tenant's configuration (<= 2 s) and catalog pointer (<= 1 s; see
:mod:`aisle.recs.serving.tenants`) and the visitor's events. The container's saved recommendation
rules are applied here, before the request's actions, so every caller gets them
(:mod:`aisle.recs.serving.saved_rules`).

The engine owns its collaborators and shares their caches with them: :attr:`PredictEngine.bundles`
(GET /bundles, POST /bundles/recommendations) and :attr:`PredictEngine.evaluation` (POST /evaluation).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.events import EventStore
from aisle.core.readiness import Readiness
from aisle.core.tenancy import Tenants
from aisle.experiments.running import RunningExperiments
from aisle.recs.containers import Container, SlotConfig
from aisle.recs.models.base import ModelType
from aisle.recs.serving.bundles import Bundles
from aisle.recs.serving.cold_start import ColdStartSimilar, VectorNeighbours, unknown_seeds
from aisle.recs.serving.containers import ContainerCache
from aisle.recs.serving.evaluation import ModelEvaluation
from aisle.recs.serving.experiments import container_arm
from aisle.recs.serving.items import ItemOut, Prediction, item_out
from aisle.recs.serving.live_models import LiveModels
from aisle.recs.serving.models import ModelSource, ServedModel
from aisle.recs.serving.personal import Personaliser
from aisle.recs.serving.prepared import Prepared
from aisle.recs.serving.query import NotWarm, PredictQuery
from aisle.recs.serving.rank import Ranked, RankOptions, compile_actions, rank_slot
from aisle.recs.serving.saved_rules import with_saved_rules
from aisle.recs.serving.stock import StockRule
from aisle.recs.serving.tenants import ServedTenant, TenantCache
from aisle.recs.serving.warmup import warm_deployed


class PredictEngine:
    """Serves every tenant of one object store. Thread-safe; one per predict process.

    Args:
        tenants: tenant lookup (raises TenantNotFound).
        events: visitor events and user features.
        models: where loaded models come from.
        containers: the containers read recently (default: a :class:`ContainerCache` of 2 s); a
            container edit is seen by this engine at most its ``ttl_s`` seconds after it is written.
        experiments: the running A/B experiments (None: none; see
            :mod:`aisle.recs.serving.experiments`).
        vectors: the tenants' text vectors, which answer the seeds a SIMILAR_ITEMS model was not
            trained on (products written since: :mod:`aisle.recs.serving.cold_start`; None: they get
            the slot's backfill only).
    """

    def __init__(
        self,
        tenants: Tenants,
        events: EventStore,
        models: ModelSource,
        *,
        containers: ContainerCache | None = None,
        experiments: RunningExperiments | None = None,
        vectors: VectorNeighbours | None = None,
    ) -> None:
        self.tenants = tenants
        self.events = events
        self.models = models
        self.containers = containers if containers is not None else ContainerCache()
        self.experiments = experiments
        self.vectors = vectors
        self.tenant_cache = TenantCache(tenants)
        self.live_models = LiveModels()
        self.personaliser = Personaliser(events)
        self.bundles = Bundles(self.tenant_cache, self.containers, models, self.personaliser)
        self.evaluation = ModelEvaluation(self.tenant_cache, models, self.personaliser)

    def cache_sizes(self) -> dict[str, Callable[[], int]]:
        """Each in-process cache's name and a function counting its entries (for the metrics)."""
        sizes = {
            "tenant_configs": self.tenants.entry_count,
            "tenants_served": self.tenant_cache.entry_count,
            "containers": self.containers.entry_count,
            "live_models": self.live_models.entry_count,
        }
        count_models = getattr(self.models, "entry_count", None)  # a ModelSource may hold no cache
        if callable(count_models):
            sizes["models"] = count_models
        return sizes

    def warm_deployed(self) -> int:
        """Load every deployed model of every tenant (and its catalog) ahead of traffic.

        Run by the predict service at start-up and then periodically. Returns the number of models
        ready (see :func:`aisle.recs.serving.warmup.warm_deployed`).
        """
        return warm_deployed(self.tenant_cache, self.models)

    def predict(self, tenant: str, q: PredictQuery) -> list[ItemOut]:
        """The items of :meth:`recommend` (same arguments and errors)."""
        return self.recommend(tenant, q).items

    def readiness(self, tenant: str, q: PredictQuery) -> Readiness[Prepared]:
        """Whether :meth:`recommend` of ``q`` now is CPU work only, with nothing to wait for, and what it
        looked up on the way (``found``, to pass back to :meth:`recommend`; see :mod:`aisle.core.readiness`,
        as :meth:`aisle.search.engine.SearchEngine.readiness` for a search).

        Nothing waits (about 1 ms of CPU, which the predict service answers on its event loop: a thread
        adds ~0.4 ms of hand-off and no parallelism under the GIL) when no visitor or user is named (their
        events are read), and the tenant's configuration, catalog and popularity pointers, the container
        and every slot's model are fresh in this engine's caches (the container may be a local file read
        with the container cache off). Anything else waits: the thread pool looks it up.

        Raises: what :meth:`recommend` raises for what is known without I/O (a fresh miss of the
        container: ContainerNotFound; ``model_ids_unknown``; a bad action), as it would.
        """
        if q.visitor_id or q.user_id:
            return Readiness(waits=True)  # personalisation reads the visitor's events
        try:
            return Readiness(waits=False, found=self._prepare(tenant, q, warm_only=True))
        except NotWarm:
            return Readiness(waits=True)

    def recommend(
        self, tenant: str, q: PredictQuery, *, ready: Readiness[Prepared] | None = None
    ) -> Prediction:
        """Recommendations of container ``q.container_id``, and what they did without (``degraded``:
        not personalised while the event store is unreachable, see :mod:`aisle.recs.serving.personal`).

        The container's saved ``recommendationRules`` apply first, then ``q.actions``
        (:func:`~aisle.recs.serving.saved_rules.with_saved_rules`), whoever calls; only
        ``q.params.container_rules=False`` leaves them out (a preview of rules being edited).

        ``ready``: :meth:`readiness` of this same ``q``; its parts are used as found (only ranking is
        left: CPU work). Without it, everything is looked up here (storage, models, events as needed).
        The container comes from :attr:`containers`, so an edit is served at most ``ttl_s`` seconds late.
        A visitor in a running recommendations experiment gets their variant's container
        (:mod:`aisle.recs.serving.experiments`), named in ``Prediction.experiments``.

        Raises:
            TenantNotFound, ContainerNotFound (404); BadRequest ``model_ids_unknown``,
            ``action_slot_unknown``, ``condition_field_unknown``, ``value_invalid`` (saved rules and
            actions over 50) (400); ModelNotDeployed (409).
        """
        found = ready.found if ready is not None else None
        parts = found if found is not None and found.query is q else self._prepare(tenant, q)
        taken: set[str] = set()
        ranked: list[Ranked] = []
        for slot, model in zip(parts.slots, parts.models, strict=True):
            ranked += rank_slot(
                slot, model, q.seeds, parts.table, parts.actions, parts.personal, taken, parts.options
            )
        items = [item_out(r, parts.table, q.params, parts.personal) for r in ranked]
        degraded = [parts.personal.degraded] if parts.personal.degraded else []
        return Prediction(items, degraded, [s.modelId for s in parts.slots], parts.served)

    def _prepare(self, tenant: str, q: PredictQuery, *, warm_only: bool = False) -> Prepared:
        """What :meth:`recommend` reads, in the order it always has; ``warm_only``: from the caches alone,
        else :class:`NotWarm` (the first part that would need I/O)."""
        config, state = self.tenant_cache.get(tenant, warm_only=warm_only)
        container = self._container(tenant, state, q.container_id, warm_only=warm_only)
        served: list[tuple[str, str]] = []
        if self.experiments is not None and q.visitor_id:  # never warm_only: readiness waits for a visitor
            container, served = container_arm(self.experiments, tenant, container, q.visitor_id)
        slots = sorted(_select_slots(container, q.model_ids), key=lambda s: s.placement)
        table = self.tenant_cache.table(config, state, warm_only=warm_only)
        rules = with_saved_rules(container, q.actions) if q.params.container_rules else q.actions
        actions = compile_actions(rules, table, {s.slotConfigId for s in container.slotConfigurations})
        personal = self.personaliser.personal(tenant, config, table, q.visitor_id, q.user_id)
        stock = StockRule.of(config.global_.stock, q.store_id)
        options = RankOptions.of(q.params, self.tenant_cache.popularity(state, warm_only=warm_only), stock)
        models = [self._model(tenant, state, s.modelId, warm_only=warm_only) for s in slots]
        models = [self._cold_start(tenant, m, q.seeds, warm_only=warm_only) for m in models]
        models = [self.live_models.served(tenant, m, table, warm_only=warm_only) for m in models]
        return Prepared(q, slots, models, table, actions, personal, options, served)

    def _model(self, tenant: str, state: ServedTenant, model_id: str, *, warm_only: bool) -> ServedModel:
        if not warm_only:
            return self.models.served(tenant, state.scope, model_id)
        model = self.models.cached(tenant, model_id)
        if model is None:
            raise NotWarm(model_id)
        return model

    def _cold_start(
        self, tenant: str, model: ServedModel, seeds: Sequence[str], *, warm_only: bool
    ) -> ServedModel:
        """``model``, or for a SIMILAR_ITEMS model that does not know every seed, the model with those
        seeds answered from the tenant's vectors (which may read storage: NotWarm when ``warm_only``)."""
        if self.vectors is None or model.model_type != ModelType.SIMILAR_ITEMS:
            return model
        if not unknown_seeds(model.recommender, list(seeds)):
            return model
        if warm_only:
            raise NotWarm("cold-start vectors")
        return replace(model, recommender=ColdStartSimilar(model.recommender, tenant, self.vectors))

    def evaluate(
        self, tenant: str, q: PredictQuery, model_type: str, model_name: str, k: int = 20
    ) -> dict[str, Any]:
        """Items of one named model (deployed or not) through the same ranking, plus its offline metrics.

        See :meth:`aisle.recs.serving.evaluation.ModelEvaluation.evaluate`. Raises ModelNotFound (404),
        BadRequest ``model_type_mismatch`` (400).
        """
        return self.evaluation.evaluate(tenant, q, model_type, model_name, k)

    def served_model(self, tenant: str, model_id: str) -> ServedModel:
        """The loaded, deployed model. Raises TenantNotFound, ModelNotFound (404), ModelNotDeployed (409)."""
        _, state = self.tenant_cache.get(tenant)
        return self.models.served(tenant, state.scope, model_id)

    def container(self, tenant: str, container_id: str) -> Container:
        """The container as predict serves it (up to ``containers.ttl_s`` stale).

        Raises TenantNotFound, ContainerNotFound (404).
        """
        _, state = self.tenant_cache.get(tenant)
        return self._container(tenant, state, container_id)

    def _container(
        self, tenant: str, state: ServedTenant, container_id: str, *, warm_only: bool = False
    ) -> Container:
        if warm_only and self.containers.ttl_s > 0:
            # a stale entry is re-read in a thread
            container = self.containers.cached(tenant, container_id)
            if container is None:
                raise NotWarm(f"container {container_id}")
            return container
        if warm_only and not self.tenant_cache.storage_is_local():
            # with the cache off a local store is still read inline (two plain file calls); S3 is not
            raise NotWarm(f"container {container_id} on remote storage")
        return self.containers.get(tenant, state.containers, container_id)


def _select_slots(container: Container, model_ids: Sequence[str] | None) -> list[SlotConfig]:
    if model_ids is None:
        return list(container.slotConfigurations)
    known = set(container.model_ids())
    unknown = [m for m in model_ids if m not in known]
    if unknown or not model_ids:
        raise BadRequest(
            f"modelIds not in container '{container.containerId}': {', '.join(unknown) or '(empty list)'}"
            f" (its models: {', '.join(sorted(known))})",
            code=ErrorCode.MODEL_IDS_UNKNOWN,
            details={"unknown": unknown, "containerModels": sorted(known)},
        )
    wanted = set(model_ids)
    return [s for s in container.slotConfigurations if s.modelId in wanted]
