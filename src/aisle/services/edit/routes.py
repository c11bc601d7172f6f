"""Routes of the edit service: thin wrappers over the registry, deployments, containers, jobs, events.

Module-level handlers on :data:`router`; resources and the token check come from :mod:`.deps`.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Query, Response

from aisle.core.auth.scopes import RECS_READ, RECS_WRITE
from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.events import Event
from aisle.core.storage import PrefixBlobStore
from aisle.core.validation import EXTERNAL_ID_PATTERN
from aisle.recs.containers import Container, ContainerBody, ContainerStore
from aisle.recs.deployments import Deployments, refuse_if_attached
from aisle.recs.ingest import record_events, require_known_types, require_sane_times
from aisle.recs.jobs import Job, JobRunner, JobStore
from aisle.recs.registry import ModelRegistry
from aisle.services.common.auth import require_scope
from aisle.services.common.errors import error_responses
from aisle.services.common.params import ResourceIdPath, TenantQuery
from aisle.services.edit.deps import AllTenants, Events, Jobs, Scope
from aisle.services.edit.schemas import (
    ContainerCreate,
    ContainerReplace,
    EventBatch,
    EventIn,
    EventList,
    EventOut,
    EventsAccepted,
    EventTypes,
    ModelList,
    ModelView,
    UserFeaturesIn,
    UserFeaturesStored,
)

PathId = ResourceIdPath

router = APIRouter()
READ = Depends(require_scope(RECS_READ))
WRITE = Depends(require_scope(RECS_WRITE))


def view(scope: PrefixBlobStore, record: Any) -> ModelView:
    """A registry record with its deployment state."""
    return ModelView(**record.model_dump(), deployment=Deployments(scope).get(record.model_id))


def submit(jobs: JobRunner, scope: PrefixBlobStore, tenant: str, kind: str, model_id: str) -> Job:
    """Persist an accepted job and wake this replica's runner (another replica may still claim it)."""
    job = JobStore(scope, tenant).submit(kind, model_id)
    jobs.wake()
    return job


# ---- models and jobs ------------------------------------------------------------------------
@router.get("/models", response_model=ModelList, dependencies=[READ], responses=error_responses(404, 422))
def list_models(
    scope: Scope,
    pageType: Annotated[str | None, Query(description="Only models serving this page type.")] = None,
    modelType: Annotated[str | None, Query(description="Only models of this type.")] = None,
) -> ModelList:
    """The tenant's models with their deployment state, filterable by page type and model type."""
    records = ModelRegistry(scope).list()
    if pageType:
        records = [r for r in records if pageType in r.page_types]
    if modelType:
        records = [r for r in records if r.model_type.value == modelType]
    return ModelList(models=[view(scope, r) for r in records])


@router.get(
    "/models/{model_id}", response_model=ModelView, dependencies=[READ], responses=error_responses(404)
)
def get_model(scope: Scope, model_id: PathId) -> ModelView:
    return view(scope, ModelRegistry(scope).get(model_id))


@router.post(
    "/models/{model_id}/deploy",
    status_code=202,
    response_model=Job,
    dependencies=[WRITE],
    responses=error_responses(404),
)
def deploy(scope: Scope, tenant: TenantQuery, model_id: PathId, jobs: Jobs) -> Job:
    """Start a job that loads and warms the model, then marks it deployed; poll ``GET /jobs/{jobId}``."""
    ModelRegistry(scope).get(model_id)
    return submit(jobs, scope, tenant, "deploy", model_id)


@router.post(
    "/models/{model_id}/undeploy",
    status_code=202,
    response_model=Job,
    dependencies=[WRITE],
    responses=error_responses(404, 409),
)
def undeploy(scope: Scope, tenant: TenantQuery, model_id: PathId, jobs: Jobs) -> Job:
    """Start an undeploy job; refused with 409 (``model_in_use``) while any container uses the model."""
    ModelRegistry(scope).get(model_id)
    refuse_if_attached(scope, model_id)
    return submit(jobs, scope, tenant, "undeploy", model_id)


@router.get("/jobs/{job_id}", response_model=Job, dependencies=[READ], responses=error_responses(404))
def get_job(scope: Scope, tenant: TenantQuery, job_id: PathId) -> Job:
    """Status (accepted, in_progress, completed, failed), ``percent`` 0-100 and a message."""
    return JobStore(scope, tenant).get(job_id)


# ---- containers -----------------------------------------------------------------------------
@router.get(
    "/containers", response_model=list[Container], dependencies=[READ], responses=error_responses(404)
)
def list_containers(scope: Scope) -> list[Container]:
    return ContainerStore(scope).list()


@router.get(
    "/containers/{container_id}",
    response_model=Container,
    dependencies=[READ],
    responses=error_responses(404),
)
def get_container(scope: Scope, container_id: PathId) -> Container:
    return ContainerStore(scope).get(container_id)


@router.post(
    "/containers",
    status_code=201,
    response_model=Container,
    dependencies=[WRITE],
    responses=error_responses(400, 404, 409, 422),
)
def create_container(scope: Scope, body: ContainerCreate) -> Container:
    """Create at version 1; every slot's model must be deployed (409 ``model_not_deployed``); a
    recommendation rule naming a slot not in the container is a 400 ``value_invalid``."""
    body.check_rule_slots()
    Deployments(scope).require_deployed(list(dict.fromkeys(s.modelId for s in body.slotConfigurations)))
    return ContainerStore(scope).create(
        body.containerId, ContainerBody(**body.model_dump(exclude={"containerId"}))
    )


@router.put(
    "/containers/{container_id}",
    response_model=Container,
    dependencies=[WRITE],
    responses=error_responses(400, 404, 409, 422),
)
def replace_container(scope: Scope, container_id: PathId, body: ContainerReplace) -> Container:
    """Replace the container at ``version``; the result has ``version + 1``. A stale version: 409
    ``container_version_conflict``, nothing changed. The body may be what ``GET`` returned (its
    read-only fields are ignored; a ``containerId`` other than the path's is a 400, as is a
    recommendation rule naming a slot not in the container)."""
    if body.containerId is not None and body.containerId != container_id:
        raise BadRequest(
            f"containerId '{body.containerId}' is not the path's '{container_id}'",
            code=ErrorCode.CONTAINER_ID_MISMATCH,
        )
    body.check_rule_slots()
    Deployments(scope).require_deployed(list(dict.fromkeys(s.modelId for s in body.slotConfigurations)))
    return ContainerStore(scope).replace(
        container_id, ContainerBody(**body.model_dump(exclude=ContainerReplace.READ_ONLY)), body.version
    )


@router.delete(
    "/containers/{container_id}",
    status_code=204,
    dependencies=[WRITE],
    responses=error_responses(404, 409),
)
def delete_container(
    scope: Scope,
    container_id: PathId,
    version: Annotated[int | None, Query(ge=1, description="Delete only at this version.")] = None,
) -> Response:
    ContainerStore(scope).delete(container_id, version)
    return Response(status_code=204)


# ---- events and user features ---------------------------------------------------------------
@router.post(
    "/events",
    status_code=202,
    response_model=EventsAccepted,
    dependencies=[WRITE],
    responses=error_responses(404, 422, 503),
)
def post_events(
    tenant: TenantQuery,
    body: Annotated[
        EventIn | EventBatch,
        Body(description='One event, or `{"events": [...]}` (up to 10,000).'),
    ],
    tenants: AllTenants,
    store: Events,
) -> EventsAccepted:
    """Store visitor events (Redis with AISLE_REDIS_URL, else the embedded shared store)."""
    allowed = tenants.config(tenant).global_.event_types
    items = body.events if isinstance(body, EventBatch) else [body]
    events = [
        Event(e.visitorId, e.eventType, e.productId, e.epoch(), e.userId, e.sessionId, e.quantity, e.price)
        for e in items
    ]
    require_known_types(events, allowed)
    require_sane_times(events)
    return EventsAccepted(accepted=record_events(store, tenant, events))


@router.get(
    "/events", response_model=EventList, dependencies=[READ], responses=error_responses(404, 422, 503)
)
def get_events(
    scope: Scope,
    tenant: TenantQuery,
    visitorId: Annotated[str, Query(pattern=EXTERNAL_ID_PATTERN, description="1-256 characters.")],
    store: Events,
    limit: Annotated[int, Query(ge=1, le=1000, description="At most this many (and the store's cap).")] = 50,
) -> EventList:
    """The visitor's recent events, newest first."""
    events = store.recent(tenant, visitorId, limit)
    return EventList(
        visitorId=visitorId,
        events=[
            EventOut(
                visitorId=e.visitor_id, eventType=e.event_type, productId=e.product_id,
                timestamp=e.timestamp, userId=e.user_id, sessionId=e.session_id, quantity=e.quantity,
                price=e.price,
            )
            for e in events
        ],
    )  # fmt: skip


@router.get("/events/types", response_model=EventTypes, dependencies=[READ], responses=error_responses(404))
def event_types(tenant: TenantQuery, tenants: AllTenants) -> EventTypes:
    """The event types of the tenant (``global_configuration.json`` ``event_types``)."""
    return EventTypes(eventTypes=list(tenants.config(tenant).global_.event_types))


@router.post(
    "/user_features",
    response_model=UserFeaturesStored,
    dependencies=[WRITE],
    responses=error_responses(404, 422, 503),
)
def user_features(
    scope: Scope, tenant: TenantQuery, body: UserFeaturesIn, store: Events
) -> UserFeaturesStored:
    """Replace a user's feature vector."""
    store.put_user_features(tenant, body.userId, body.features)
    return UserFeaturesStored(userId=body.userId)
