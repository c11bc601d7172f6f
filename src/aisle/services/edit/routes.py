"""Routes of the edit service: parse, call one engine, shape: the recs admin front door
(:class:`~aisle.recs.editing.RecsEditor`), or for shopper events the behaviour engine's
(:class:`~aisle.behaviour.engine.BehaviourEngine`).

Module-level handlers on :data:`router`; the engine, the tenant check and the token check come from
:mod:`.deps`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Body, Depends, Query, Response

from aisle.behaviour.engine import BehaviourEngine
from aisle.core.auth.scopes import RECS_READ, RECS_WRITE
from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.events import Event
from aisle.core.validation import EXTERNAL_ID_PATTERN
from aisle.recs.containers import Container, ContainerBody
from aisle.recs.editing import ModelStatus
from aisle.recs.jobs import Job
from aisle.services.common.auth import require_scope
from aisle.services.common.errors import error_responses
from aisle.services.common.params import ResourceIdPath, TenantQuery
from aisle.services.edit.deps import Behaviour, Editor, KnownTenant
from aisle.services.edit.schemas import (
    ContainerCreate,
    ContainerReplace,
    EventBatch,
    EventIn,
    EventList,
    EventOut,
    EventsAccepted,
    EventTypes,
    JobList,
    ModelList,
    ModelView,
    UserFeaturesIn,
    UserFeaturesStored,
)

PathId = ResourceIdPath

router = APIRouter()
READ = Depends(require_scope(RECS_READ))
WRITE = Depends(require_scope(RECS_WRITE))


def view(status: ModelStatus) -> ModelView:
    """A registry record with its deployment state."""
    return ModelView(**status.record.model_dump(), deployment=status.deployment)


# ---- models and jobs ------------------------------------------------------------------------
@router.get("/models", response_model=ModelList, dependencies=[READ], responses=error_responses(404, 422))
def list_models(
    editor: Editor,
    tenant: KnownTenant,
    pageType: Annotated[str | None, Query(description="Only models serving this page type.")] = None,
    modelType: Annotated[str | None, Query(description="Only models of this type.")] = None,
) -> ModelList:
    """The tenant's models with their deployment state, filterable by page type and model type."""
    found = editor.models(tenant, page_type=pageType, model_type=modelType)
    return ModelList(models=[view(m) for m in found])


@router.get(
    "/models/{model_id}", response_model=ModelView, dependencies=[READ], responses=error_responses(404)
)
def get_model(editor: Editor, tenant: KnownTenant, model_id: PathId) -> ModelView:
    return view(editor.model(tenant, model_id))


@router.post(
    "/models/{model_id}/deploy",
    status_code=202,
    response_model=Job,
    dependencies=[WRITE],
    responses=error_responses(404),
)
def deploy(editor: Editor, tenant: KnownTenant, model_id: PathId) -> Job:
    """Start a job that loads and warms the model, then marks it deployed; poll ``GET /jobs/{jobId}``."""
    return editor.deploy(tenant, model_id)


@router.post(
    "/models/{model_id}/undeploy",
    status_code=202,
    response_model=Job,
    dependencies=[WRITE],
    responses=error_responses(404, 409),
)
def undeploy(editor: Editor, tenant: KnownTenant, model_id: PathId) -> Job:
    """Start an undeploy job; refused with 409 (``model_in_use``) while any container uses the model."""
    return editor.undeploy(tenant, model_id)


@router.post(
    "/rankers/train",
    status_code=202,
    response_model=Job,
    dependencies=[WRITE],
    responses=error_responses(404, 422),
)
def train_search_ranker(
    editor: Editor,
    tenant: KnownTenant,
    source: Annotated[
        Literal["behaviour"],
        Query(description="What to learn from: behaviour (the tenant's logged searches and clicks)."),
    ] = "behaviour",
    deploy: Annotated[
        Literal["experiment", "threshold", "never"],
        Query(
            description="How the new version may go live. experiment: running ranker trials are judged "
            "first (promoted on a significant click-through win once both arms have the visitors the "
            "test needs, stopped otherwise), then, past the traffic threshold, the new version is put "
            "on trial against the live setting (an A/B experiment, 50/50 by visitor) unless a trial is "
            "still collecting visitors. threshold: in use directly past the traffic threshold. never: "
            "saved only."
        ),
    ] = "experiment",
    minimumDetectableEffect: Annotated[
        float,
        Query(
            gt=0,
            le=1,
            description="Relative click-through lift a new trial is sized to detect (0.05: +5%).",
        ),
    ] = BehaviourEngine.DEFAULT_MDE,
) -> Job:
    """Start a job that refreshes the tenant's behaviour features and trains its search ranker from them
    (debiased for position), saved as the next version. Poll ``GET /jobs/{jobId}``: the result names the
    ranker version, whether it was deployed, the trial started for it (``trial``) and what became of
    the running trials (``judgedTrials``: promoted, rejected, invalid or still collecting)."""
    params = {"source": source, "deploy": deploy, "minimumDetectableEffect": minimumDetectableEffect}
    return editor.submit(tenant, BehaviourEngine.TRAIN_RANKER, params)


@router.post(
    "/popularity/refresh",
    status_code=202,
    response_model=Job,
    dependencies=[WRITE],
    responses=error_responses(404, 422),
)
def refresh_popularity(editor: Editor, tenant: KnownTenant) -> Job:
    """Start a job that recomputes the tenant's product popularity and trending from its shopper events
    (views, carts, purchases sent to ``POST /events``, last 90 days) and publishes them as a new version.
    Predict then backfills short lists (cold seeds) by popularity within seconds (``predictParams``
    ``backfillOrder``). Poll ``GET /jobs/{jobId}``: the result names the version, events and products."""
    return editor.submit(tenant, BehaviourEngine.REFRESH_POPULARITY)


@router.get("/jobs", response_model=JobList, dependencies=[READ], responses=error_responses(404))
def list_jobs(editor: Editor, tenant: KnownTenant) -> JobList:
    """Unfinished jobs (accepted, in_progress), oldest first: a deploy another client started shows."""
    return JobList(jobs=editor.unfinished_jobs(tenant))


@router.get("/jobs/{job_id}", response_model=Job, dependencies=[READ], responses=error_responses(404))
def get_job(editor: Editor, tenant: KnownTenant, job_id: PathId) -> Job:
    """Status (accepted, in_progress, completed, failed), ``percent`` 0-100 and a message."""
    return editor.job(tenant, job_id)


# ---- containers -----------------------------------------------------------------------------
@router.get(
    "/containers", response_model=list[Container], dependencies=[READ], responses=error_responses(404)
)
def list_containers(editor: Editor, tenant: KnownTenant) -> list[Container]:
    return editor.containers(tenant)


@router.get(
    "/containers/{container_id}",
    response_model=Container,
    dependencies=[READ],
    responses=error_responses(404),
)
def get_container(editor: Editor, tenant: KnownTenant, container_id: PathId) -> Container:
    return editor.container(tenant, container_id)


@router.post(
    "/containers",
    status_code=201,
    response_model=Container,
    dependencies=[WRITE],
    responses=error_responses(400, 404, 409, 422),
)
def create_container(editor: Editor, tenant: KnownTenant, body: ContainerCreate) -> Container:
    """Create at version 1; every slot's model must be deployed (409 ``model_not_deployed``); a
    recommendation rule naming a slot not in the container is a 400 ``value_invalid``."""
    fields = ContainerBody(**body.model_dump(exclude={"containerId"}))
    return editor.create_container(tenant, body.containerId, fields)


@router.put(
    "/containers/{container_id}",
    response_model=Container,
    dependencies=[WRITE],
    responses=error_responses(400, 404, 409, 422),
)
def replace_container(
    editor: Editor, tenant: KnownTenant, container_id: PathId, body: ContainerReplace
) -> Container:
    """Replace the container at ``version``; the result has ``version + 1``. A stale version: 409
    ``container_version_conflict``, nothing changed. The body may be what ``GET`` returned (its
    read-only fields are ignored; a ``containerId`` other than the path's is a 400, as is a
    recommendation rule naming a slot not in the container)."""
    if body.containerId is not None and body.containerId != container_id:
        raise BadRequest(
            f"containerId '{body.containerId}' is not the path's '{container_id}'",
            code=ErrorCode.CONTAINER_ID_MISMATCH,
        )
    fields = ContainerBody(**body.model_dump(exclude=ContainerReplace.READ_ONLY))
    return editor.replace_container(tenant, container_id, fields, body.version)


@router.delete(
    "/containers/{container_id}",
    status_code=204,
    dependencies=[WRITE],
    responses=error_responses(404, 409),
)
def delete_container(
    editor: Editor,
    tenant: KnownTenant,
    container_id: PathId,
    version: Annotated[int | None, Query(ge=1, description="Delete only at this version.")] = None,
) -> Response:
    editor.delete_container(tenant, container_id, version)
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
    behaviour: Behaviour,
) -> EventsAccepted:
    """Store visitor events (Redis with AISLE_REDIS_URL, else the embedded shared store), durably before
    the 202; each also reaches analytics (at least once, counted once by ``eventId``). ``click`` is
    accepted besides the tenant's own event types; a click or purchase carrying the ``attributionToken``
    of an answer counts for that answer."""
    items = body.events if isinstance(body, EventBatch) else [body]
    events = [
        Event(
            e.visitorId,
            e.eventType,
            e.productId,
            e.epoch(),
            e.userId,
            e.sessionId,
            e.quantity,
            e.price,
            event_id=e.eventId,
            attribution_token=e.attributionToken,
            position=e.position,
        )
        for e in items
    ]
    return EventsAccepted(accepted=behaviour.record_events(tenant, events))


@router.get(
    "/events", response_model=EventList, dependencies=[READ], responses=error_responses(404, 422, 503)
)
def get_events(
    editor: Editor,
    tenant: KnownTenant,
    visitorId: Annotated[str, Query(pattern=EXTERNAL_ID_PATTERN, description="1-256 characters.")],
    limit: Annotated[int, Query(ge=1, le=1000, description="At most this many (and the store's cap).")] = 50,
) -> EventList:
    """The visitor's recent events, newest first."""
    events = editor.recent_events(tenant, visitorId, limit)
    return EventList(
        visitorId=visitorId,
        events=[
            EventOut(
                visitorId=e.visitor_id, eventType=e.event_type, productId=e.product_id,
                timestamp=e.timestamp, userId=e.user_id, sessionId=e.session_id, quantity=e.quantity,
                price=e.price, eventId=e.event_id, attributionToken=e.attribution_token, position=e.position,
            )
            for e in events
        ],
    )  # fmt: skip


@router.get("/events/types", response_model=EventTypes, dependencies=[READ], responses=error_responses(404))
def event_types(tenant: TenantQuery, behaviour: Behaviour) -> EventTypes:
    """The event types of the tenant (``global_configuration.json`` ``event_types``), and ``click``."""
    return EventTypes(eventTypes=behaviour.event_types(tenant))


@router.post(
    "/user_features",
    response_model=UserFeaturesStored,
    dependencies=[WRITE],
    responses=error_responses(404, 422, 503),
)
def user_features(editor: Editor, tenant: KnownTenant, body: UserFeaturesIn) -> UserFeaturesStored:
    """Replace a user's feature vector."""
    editor.put_user_features(tenant, body.userId, body.features)
    return UserFeaturesStored(userId=body.userId)
