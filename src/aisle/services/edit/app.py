"""The recommendation edit service (port 8084): models, deploy jobs, containers, events, user features.

Start with ``uvicorn --factory aisle.services.edit.app:create_app`` (``aisle serve`` does); settings come
from the ``AISLE_*`` environment when none are given. Each route calls one engine: the recs admin front
door, :class:`~aisle.recs.editing.RecsEditor`, or for shopper events the behaviour engine's,
:class:`~aisle.behaviour.engine.BehaviourEngine`, which also hands the job runner the jobs that learn
from behaviour (``train_ranker``, ``refresh_popularity``). Each process runs one job runner, so several
replicas share the job queue in object storage (a job still runs once).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from aisle.behaviour.engine import BehaviourEngine
from aisle.core.auth.dependencies import Authorizer
from aisle.core.config import Settings, load_settings
from aisle.core.events import EventStore, open_event_store
from aisle.core.storage.resolver import open_blob_store_from_settings
from aisle.recs.deployments import Loader
from aisle.recs.editing import RecsEditor
from aisle.services.common.app import service_app
from aisle.services.edit.routes import router
from aisle.services.edit.state import EditState


def create_app(
    settings: Settings | None = None,
    *,
    loader: Loader | None = None,
    events: EventStore | None = None,
    job_poll_s: float = 1.0,
) -> FastAPI:
    """Build the edit service.

    Args:
        settings: process settings (default: from the environment).
        loader: how deploy jobs load a model (default: :func:`aisle.recs.deployments.default_loader`,
            the artifact through ``aisle.recs.loading.load_recommender``).
        events: the event store (default: :func:`aisle.core.events.open_event_store`).
        job_poll_s: seconds between scans for jobs submitted through other replicas.
    """
    settings = settings or load_settings()
    store = open_blob_store_from_settings(settings)
    events = events if events is not None else open_event_store(settings)
    behaviour = BehaviourEngine(settings, store, events)
    editor = RecsEditor.from_settings(
        settings,
        store,
        events=events,
        loader=loader,
        job_poll_s=job_poll_s,
        handlers=behaviour.job_handlers(),
    )
    state = EditState(
        settings=settings, editor=editor, behaviour=behaviour, authorizer=Authorizer(settings, store)
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        editor.start()
        yield
        editor.close()

    app = service_app(
        "edit",
        title="Aisle recommendation edit service",
        description="Models and their deployment (asynchronous jobs), containers (versioned, optimistic "
        "concurrency), visitor events and user feature vectors. Every endpoint but /health takes the "
        '`tenant` query parameter. Errors: `{"error": {"code", "message", "details"}}`.',
        routers=[router],
        lifespan=lifespan,
        server_timing=False,
        settings=settings,
        tenants=editor.tenants,
        bulk_paths=["/events"],
    )
    # One schema per model, not pydantic's separate input and output ones: the recursive conditions of a
    # container's rules came out as AndCondition-Input and AndCondition-Output, which client generators
    # (openapi-python-client) cannot name apart, so every Container answer was dropped from the client.
    app.separate_input_output_schemas = False
    app.state.edit = state
    app.state.authorizer = state.authorizer
    return app
