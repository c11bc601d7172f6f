"""The analytics service (port 8087): what Aisle's answers earned, per tenant.

Start with ``uvicorn --factory aisle.services.analytics.app:create_app`` (``aisle serve`` does). It reads
the answer and event log every service writes to the bucket (:mod:`aisle.analytics`) with DuckDB; its
routes call the analytics front door (:class:`~aisle.analytics.engine.AnalyticsEngine`). In the
background the behaviour engine drains the event outbox into the log, computes the roll-up of each
closed day (so reports read one small file per day) and, once a day, deletes the day partitions older
than ``AISLE_ANALYTICS_RETENTION_DAYS``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.concurrency import run_in_threadpool

from aisle.analytics.engine import AnalyticsEngine
from aisle.behaviour.engine import BehaviourEngine
from aisle.core.auth.dependencies import Authorizer
from aisle.core.config import Settings, load_settings
from aisle.core.events import EventStore, open_event_store
from aisle.core.storage.resolver import open_blob_store_from_settings
from aisle.core.tenancy import Tenants
from aisle.services.analytics import routes
from aisle.services.analytics.state import AnalyticsState
from aisle.services.common.app import service_app


def create_app(
    settings: Settings | None = None,
    *,
    events: EventStore | None = None,
    clock: Callable[[], float] = time.time,
) -> FastAPI:
    """Build the analytics service (it records no answers itself: it reads what the others record).

    While it runs, the behaviour engine (:meth:`~aisle.behaviour.engine.BehaviourEngine.start_delivery`)
    moves the shopper events waiting in the event store's outbox (``events``, default
    :func:`aisle.core.events.open_event_store`) into the log every ``AISLE_ANALYTICS_FLUSH_SECONDS``, so
    an event is counted in the reports within that interval of its 202, and keeps the log tidy; on
    shutdown it delivers what waits and closes the event store. ``clock`` is the reports' current time
    (which days are closed, which is not over yet; tests pass a fixed one).
    """
    settings = settings or load_settings()
    blob = open_blob_store_from_settings(settings)
    tenants = Tenants(blob)
    engine = AnalyticsEngine.from_settings(settings, blob, record=False, clock=clock)
    behaviour = BehaviourEngine(
        settings, blob, events if events is not None else open_event_store(settings), analytics=engine
    )
    state = AnalyticsState(settings=settings, tenants=tenants, engine=engine)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        behaviour.start_delivery()
        yield
        await run_in_threadpool(behaviour.stop_delivery)

    app = service_app(
        "analytics",
        title="Aisle analytics service",
        description="What search and recommendation answers earned, per tenant: searches, no-result and "
        "click-through rates, conversions and revenue, by query, position, container and rule. Every answer "
        "that shows products carries an `attributionToken`; shopper events (`POST /events` on the edit "
        "service) that carry it, or a purchase by the same visitor within the attribution window, count "
        "for that answer. Periods are ISO-8601 (`from`, `to`); `format=csv` answers CSV. Errors use one "
        'envelope: `{"error": {"code", "message", "details"}}`.',
        routers=[routes.router],
        lifespan=lifespan,
        settings=settings,
        tenants=tenants,
    )
    app.state.analytics = state
    app.state.authorizer = Authorizer(settings, blob)
    return app
