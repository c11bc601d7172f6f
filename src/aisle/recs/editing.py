"""The recommendation edit engine: models and their deploy jobs, containers, visitor events, user features.

No HTTP here (services -> engines -> core): the edit service parses each request and calls one method of
:class:`RecsEditor`, the edit side's front door as :class:`~aisle.recs.serving.PredictEngine` is the
serving side's. Behind it: the registry (:mod:`aisle.recs.registry`), deployments and the deploy /
undeploy jobs (:mod:`aisle.recs.deployments`, run by this process's :class:`~aisle.recs.jobs.JobRunner`),
containers (:mod:`aisle.recs.containers`), a visitor's recent events and user features. Event ingestion
belongs to the behaviour engine (:class:`aisle.behaviour.engine.BehaviourEngine`).

Every method taking ``tenant`` raises TenantNotFound (404) for an unknown tenant; storage errors are
StorageUnavailable (503), event store errors EventStoreUnavailable (503).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aisle.core.config import Settings
from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.events import Event, EventStore, open_event_store
from aisle.core.storage import BlobStore, PrefixBlobStore
from aisle.core.storage.resolver import open_blob_store_from_settings
from aisle.core.tenancy import Tenants
from aisle.recs.actions import condition_fields
from aisle.recs.containers import Container, ContainerBody, ContainerStore
from aisle.recs.deployments import (
    Deployment,
    Deployments,
    Loader,
    deploy_handler,
    refuse_if_attached,
    undeploy_handler,
)
from aisle.recs.jobs import Job, JobHandler, JobRunner, JobStore
from aisle.recs.registry import ModelRecord, ModelRegistry


@dataclass(frozen=True)
class ModelStatus:
    """A registry record and its deployment state (None: never deployed)."""

    record: ModelRecord
    deployment: Deployment | None


class RecsEditor:
    """Changes the recommendation state of every tenant of one object store. Thread-safe.

    Args:
        store: the root object store (tenants are its top-level folders).
        events: visitor events and user features.
        loader: how deploy jobs load a model (default: :func:`aisle.recs.deployments.default_loader`).
        job_poll_s: seconds between the job runner's scans for jobs submitted through other replicas.

    :meth:`start` starts the job runner (jobs are persisted in storage, so any replica may run one, once);
    :meth:`close` stops it and closes the event store.
    """

    def __init__(
        self,
        store: BlobStore,
        events: EventStore,
        *,
        loader: Loader | None = None,
        job_poll_s: float = 1.0,
        handlers: dict[str, JobHandler] | None = None,
    ) -> None:
        self.store = store
        self.tenants = Tenants(store)
        self.events = events
        self.jobs = JobRunner(
            store,
            self.tenants.names,
            {"deploy": deploy_handler(loader), "undeploy": undeploy_handler(), **(handlers or {})},
            poll_s=job_poll_s,
        )

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        store: BlobStore | None = None,
        *,
        events: EventStore | None = None,
        loader: Loader | None = None,
        job_poll_s: float = 1.0,
        handlers: dict[str, JobHandler] | None = None,
    ) -> RecsEditor:
        """The editor over ``AISLE_STORAGE_URL`` (or ``store``) and the event store the settings name."""
        return cls(
            store if store is not None else open_blob_store_from_settings(settings),
            events if events is not None else open_event_store(settings),
            loader=loader,
            job_poll_s=job_poll_s,
            handlers=handlers,
        )

    def start(self) -> None:
        """Start the background job runner."""
        self.jobs.start()

    def close(self) -> None:
        """Stop the job runner (waits for a running job up to 10 s) and close the event store."""
        self.jobs.stop()
        self.events.close()

    def scope(self, tenant: str) -> PrefixBlobStore:
        """The storage scope of ``tenant``. Raises TenantNotFound (404)."""
        self.tenants.config(tenant)
        return self.tenants.scope(tenant)

    # ---- models and jobs --------------------------------------------------------------------
    def models(
        self, tenant: str, *, page_type: str | None = None, model_type: str | None = None
    ) -> list[ModelStatus]:
        """The tenant's models with their deployment state; only those serving ``page_type`` and of
        ``model_type`` (a ``ModelType`` value) when given."""
        scope = self.scope(tenant)
        records = ModelRegistry(scope).list()
        if page_type:
            records = [r for r in records if page_type in r.page_types]
        if model_type:
            records = [r for r in records if r.model_type.value == model_type]
        deployments = Deployments(scope)
        return [ModelStatus(r, deployments.get(r.model_id)) for r in records]

    def model(self, tenant: str, model_id: str) -> ModelStatus:
        """One model and its deployment state. Raises ModelNotFound (404)."""
        scope = self.scope(tenant)
        return ModelStatus(ModelRegistry(scope).get(model_id), Deployments(scope).get(model_id))

    def deploy(self, tenant: str, model_id: str) -> Job:
        """Submit a job that loads and warms the model, then marks it deployed. Raises ModelNotFound."""
        scope = self.scope(tenant)
        ModelRegistry(scope).get(model_id)
        return self._submit(scope, tenant, "deploy", model_id)

    def undeploy(self, tenant: str, model_id: str) -> Job:
        """Submit an undeploy job. Raises ModelNotFound (404), ModelInUse (409 ``model_in_use``) while a
        container uses the model."""
        scope = self.scope(tenant)
        ModelRegistry(scope).get(model_id)
        refuse_if_attached(scope, model_id)
        return self._submit(scope, tenant, "undeploy", model_id)

    def submit(self, tenant: str, kind: str, params: dict[str, Any] | None = None) -> Job:
        """Submit a tenant-wide job of ``kind`` (one of the handlers the service added, such as the search
        ranker's ``train_ranker``) with its request ``params``. Raises TenantNotFound (404)."""
        return self._submit(self.scope(tenant), tenant, kind, None, params)

    def job(self, tenant: str, job_id: str) -> Job:
        """A job's status, ``percent`` 0-100 and message. Raises JobNotFound (404)."""
        return JobStore(self.scope(tenant), tenant).get(job_id)

    def unfinished_jobs(self, tenant: str) -> list[Job]:
        """The tenant's jobs not ended yet (accepted or in progress), oldest first."""
        return JobStore(self.scope(tenant), tenant).unfinished()

    def _submit(
        self,
        scope: PrefixBlobStore,
        tenant: str,
        kind: str,
        model_id: str | None,
        params: dict[str, Any] | None = None,
    ) -> Job:
        """Persist an accepted job and wake this replica's runner (another replica may still claim it)."""
        job = JobStore(scope, tenant).submit(kind, model_id, params)
        self.jobs.wake()
        return job

    # ---- containers -------------------------------------------------------------------------
    def containers(self, tenant: str) -> list[Container]:
        """Every container of the tenant."""
        return ContainerStore(self.scope(tenant)).list()

    def container(self, tenant: str, container_id: str) -> Container:
        """One container. Raises ContainerNotFound (404)."""
        return ContainerStore(self.scope(tenant)).get(container_id)

    def create_container(self, tenant: str, container_id: str, body: ContainerBody) -> Container:
        """Create at version 1. Raises BadRequest ``value_invalid`` (400: a rule names a slot not in the
        container), ModelNotDeployed (409: a slot's model), a 409 when the id exists."""
        scope = self._checked(tenant, body)
        return ContainerStore(scope).create(container_id, body)

    def replace_container(
        self, tenant: str, container_id: str, body: ContainerBody, version: int
    ) -> Container:
        """Replace at ``version``; the result has ``version + 1``. Raises as :meth:`create_container`,
        ContainerNotFound (404), ``container_version_conflict`` (409) for a stale version."""
        scope = self._checked(tenant, body)
        return ContainerStore(scope).replace(container_id, body, version)

    def delete_container(self, tenant: str, container_id: str, version: int | None = None) -> None:
        """Delete (only at ``version`` when given). Raises ContainerNotFound (404), a 409 for a stale
        version."""
        ContainerStore(self.scope(tenant)).delete(container_id, version)

    def _checked(self, tenant: str, body: ContainerBody) -> PrefixBlobStore:
        body.check_rule_slots()
        scope = self.scope(tenant)
        self._check_rule_fields(tenant, body)
        Deployments(scope).require_deployed(list(dict.fromkeys(s.modelId for s in body.slotConfigurations)))
        return scope

    def _check_rule_fields(self, tenant: str, body: ContainerBody) -> None:
        """Refuse a saved rule whose condition names a field the catalog lacks: predict would refuse
        every request of the container for it (BadRequest ``condition_field_unknown``, 400)."""
        known = {"id", *(a.name for a in self.tenants.config(tenant).attributes.attributes)}
        for i, rule in enumerate(body.recommendationRules):
            unknown = sorted(condition_fields(rule.condition) - known)
            if unknown:
                field = f"recommendationRules.{i}.condition"
                message = f"'{unknown[0]}' is not a catalog field (known: {', '.join(sorted(known))})"
                raise BadRequest(
                    f"{field}: {message}",
                    code=ErrorCode.CONDITION_FIELD_UNKNOWN,
                    details=[{"field": f"body.{field}", "message": message}],
                )

    # ---- events and user features -----------------------------------------------------------
    def recent_events(self, tenant: str, visitor_id: str, limit: int) -> list[Event]:
        """The visitor's most recent events, newest first (at most ``limit`` and the store's cap)."""
        self.scope(tenant)
        return self.events.recent(tenant, visitor_id, limit)

    def put_user_features(self, tenant: str, user_id: str, features: dict[str, object]) -> None:
        """Replace a user's feature vector."""
        self.scope(tenant)
        self.events.put_user_features(tenant, user_id, features)
