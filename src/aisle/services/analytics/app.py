"""The analytics service (port 8087): what Aisle's answers earned, per tenant.

Start with ``uvicorn --factory aisle.services.analytics.app:create_app`` (``aisle serve`` does). It reads
the answer and event log every service writes to the bucket (:mod:`aisle.analytics`) with DuckDB. In the
background it computes the roll-up of each closed day (so reports read one small file per day) and,
once a day, deletes the day partitions older than ``AISLE_ANALYTICS_RETENTION_DAYS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime

from fastapi import FastAPI
from fastapi.concurrency import run_in_threadpool

from aisle.analytics.engine import AnalyticsEngine
from aisle.analytics.outbox import drain
from aisle.core.auth.dependencies import Authorizer
from aisle.core.config import Settings, load_settings
from aisle.core.events import EventStore, open_event_store
from aisle.core.storage.resolver import open_blob_store_from_settings
from aisle.core.tenancy import Tenants
from aisle.services.analytics import routes
from aisle.services.analytics.state import AnalyticsState
from aisle.services.common.app import service_app

log = logging.getLogger("aisle.analytics")
UPKEEP_FIRST_S = 60.0
"""Seconds after start-up before the first upkeep round: the service answers first, then tidies."""
UPKEEP_EVERY_S = 600.0
"""Seconds between two rounds of upkeep: closed days' roll-ups computed, old days deleted (daily)."""


def expire_old_days(state: AnalyticsState) -> list[str]:
    """Delete every tenant's day partitions older than the retention; returns ``tenant/day`` deleted."""
    today = datetime.now(UTC).date()
    gone = []
    for tenant in state.tenants.names():
        for day in state.engine.log.expire(tenant, state.settings.analytics_retention_days, today):
            gone.append(f"{tenant}/{day.isoformat()}")
    return gone


def warm_rollups(state: AnalyticsState) -> int:
    """Compute the roll-up of every closed day that has answers and none yet (or a stale one), so no
    report waits for it. Returns how many days were looked at."""
    rollups = state.engine.reports.rollups
    looked = 0
    for tenant in state.tenants.names():
        for day in state.engine.log.days(tenant, "answers"):
            if rollups.closed(day):
                rollups.file(tenant, day)
                looked += 1
    return looked


def drain_outboxes(state: AnalyticsState, events: EventStore) -> int:
    """Move every tenant's event outbox into the log (:func:`aisle.analytics.outbox.drain`)."""
    return sum(drain(events, state.engine.log, tenant) for tenant in events.outbox_tenants())


def create_app(settings: Settings | None = None, *, events: EventStore | None = None) -> FastAPI:
    """Build the analytics service (it records no answers itself: it reads what the others record).

    Every ``AISLE_ANALYTICS_FLUSH_SECONDS`` it moves the shopper events waiting in the event store's
    outbox (``events``, default :func:`aisle.core.events.open_event_store`) into the log, so an event is
    counted in the reports within that interval of its 202.
    """
    settings = settings or load_settings()
    blob = open_blob_store_from_settings(settings)
    tenants = Tenants(blob)
    events = events or open_event_store(settings)
    state = AnalyticsState(
        settings=settings, tenants=tenants, engine=AnalyticsEngine.from_settings(settings, blob, record=False)
    )

    # one drain at a time, and none once the store is closed: cancelling the delivery task does not stop
    # a drain already running in its thread, and closing the store's connections under it crashed the
    # process (sqlite, a segmentation fault at shutdown)
    draining = threading.Lock()

    def drain_once() -> int:
        with draining:
            return drain_outboxes(state, events)

    def drain_and_close() -> None:
        with draining:
            try:
                drain_outboxes(state, events)  # SIGTERM: deliver what is waiting
            finally:
                events.close()

    async def deliver() -> None:
        while True:
            try:
                await run_in_threadpool(drain_once)
            except Exception:  # the event store or the bucket is down: the next round tries again
                log.exception("analytics: draining the event outbox failed")
            await asyncio.sleep(settings.analytics_flush_seconds)

    async def upkeep() -> None:
        expired_on = None
        await asyncio.sleep(UPKEEP_FIRST_S)
        while True:
            try:
                if expired_on != datetime.now(UTC).date():
                    gone = await run_in_threadpool(expire_old_days, state)
                    expired_on = datetime.now(UTC).date()
                    if gone:
                        log.info("analytics retention deleted %d day partitions", len(gone))
                await run_in_threadpool(warm_rollups, state)
            except Exception:  # storage down: the next round tries again
                log.exception("analytics upkeep failed")
            await asyncio.sleep(UPKEEP_EVERY_S)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        tasks = [asyncio.create_task(upkeep()), asyncio.create_task(deliver())]
        yield
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await run_in_threadpool(drain_and_close)

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
