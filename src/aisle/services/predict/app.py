"""The recommendation predict service (port 8081): POST /predict, /evaluation, bundles.

Start with ``uvicorn --factory aisle.services.predict.app:create_app`` (``aisle serve`` does); settings
come from the ``AISLE_*`` environment when none are given.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from aisle.core.auth.dependencies import Authorizer
from aisle.core.config import Settings, load_settings
from aisle.core.errors import Unavailable
from aisle.core.events import EventStore, open_event_store
from aisle.core.storage.resolver import open_blob_store_from_settings
from aisle.core.tenancy import Tenants
from aisle.experiments.store import LiveExperiments
from aisle.recs.serving import (
    ContainerCache,
    ModelSource,
    PredictEngine,
    RegistryModelSource,
    TableFollower,
    VectorNeighbours,
)
from aisle.services.common.app import service_app
from aisle.services.common.outcomes import open_outcomes
from aisle.services.predict.routes import router
from aisle.services.predict.state import PredictState
from aisle.vectors.store import VectorStore

log = logging.getLogger("aisle.predict")


def create_app(
    settings: Settings | None = None,
    *,
    models: ModelSource | None = None,
    events: EventStore | None = None,
    warm_interval_s: float = 2.0,
) -> FastAPI:
    """Build the predict service.

    Args:
        settings: process settings (default: from the environment); ``container_cache_seconds`` bounds
            how late a container edit is served.
        models: where models come from (default: the registry, loaded with ``aisle.recs.loading``).
        events: the event store (default: :func:`aisle.core.events.open_event_store`).
        warm_interval_s: seconds between passes that load newly deployed models ahead of traffic
            (0 disables; models then load on their first request).
    """
    settings = settings or load_settings()
    store = open_blob_store_from_settings(settings)
    tenants = Tenants(store)
    events = events or open_event_store(settings)
    models = models or RegistryModelSource()
    state = PredictState(
        settings=settings,
        tenants=tenants,
        events=events,
        engine=PredictEngine(
            tenants,
            events,
            models,
            containers=ContainerCache(settings.container_cache_seconds),
            experiments=LiveExperiments(store),
            vectors=VectorNeighbours(VectorStore.from_settings(settings, store)),
        ),
        authorizer=Authorizer(settings, store),
    )

    follower = TableFollower(state.engine.tenant_cache, settings.catalog_follow_seconds)
    stop = threading.Event()

    def warm_loop() -> None:
        while not stop.is_set():
            try:
                state.engine.warm_deployed()
            except Unavailable as exc:  # storage down: keep serving, retry on the next pass
                log.warning("model warm-up pass skipped: %s", exc.message)
            except Exception:
                log.exception("model warm-up pass failed")
            stop.wait(warm_interval_s)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        warmer = threading.Thread(target=warm_loop, name="aisle-predict-warmer", daemon=True)
        if warm_interval_s > 0:
            warmer.start()
        follower.start()
        yield
        stop.set()
        follower.stop()
        if warmer.is_alive():
            warmer.join(timeout=30)
        outcomes.close()
        state.events.close()

    app = service_app(
        "predict",
        title="Aisle recommendation predict service",
        description="Real-time recommendations from the models of a container, with FILTER / BOOST / BURY "
        "actions, session and brand-affinity personalisation and diversity; product bundles. Every answer, "
        'errors included, is the envelope `{"success", "response_data", "error"}`; `error` is '
        '`{"code", "message", "details"}` with a stable code.',
        routers=[router],
        lifespan=lifespan,
        server_timing=False,
        envelope="predict",
        settings=settings,
        tenants=tenants,
    )
    app.state.metrics.add_caches(state.engine.cache_sizes())
    outcomes = open_outcomes(app, "predict", settings, store)
    app.state.predict = state
    app.state.authorizer = state.authorizer
    return app
