"""The analytics service (port 8087): what Aisle's answers earned, per tenant.

Start with ``uvicorn --factory aisle.services.analytics.app:create_app`` (``aisle serve`` does). It reads
the answer and event log every service writes to the bucket (:mod:`aisle.analytics`) with DuckDB, and
once a day deletes the day partitions older than ``AISLE_ANALYTICS_RETENTION_DAYS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime

from fastapi import FastAPI
from fastapi.concurrency import run_in_threadpool

from aisle.analytics.engine import AnalyticsEngine
from aisle.core.auth.dependencies import Authorizer
from aisle.core.config import Settings, load_settings
from aisle.core.storage.resolver import open_blob_store_from_settings
from aisle.core.tenancy import Tenants
from aisle.services.analytics import routes
from aisle.services.analytics.state import AnalyticsState
from aisle.services.common.app import service_app

log = logging.getLogger("aisle.analytics")
RETENTION_EVERY_S = 24 * 3600.0


def expire_old_days(state: AnalyticsState) -> list[str]:
    """Delete every tenant's day partitions older than the retention; returns ``tenant/day`` deleted."""
    today = datetime.now(UTC).date()
    gone = []
    for tenant in state.tenants.names():
        for day in state.engine.log.expire(tenant, state.settings.analytics_retention_days, today):
            gone.append(f"{tenant}/{day.isoformat()}")
    return gone


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the analytics service (it records nothing itself: it reads what the others record)."""
    settings = settings or load_settings()
    blob = open_blob_store_from_settings(settings)
    tenants = Tenants(blob)
    state = AnalyticsState(
        settings=settings, tenants=tenants, engine=AnalyticsEngine.from_settings(settings, blob, record=False)
    )

    async def retention() -> None:
        while True:
            try:
                gone = await run_in_threadpool(expire_old_days, state)
                if gone:
                    log.info("analytics retention deleted %d day partitions", len(gone))
            except Exception:  # storage down: the next day tries again
                log.exception("analytics retention failed")
            await asyncio.sleep(RETENTION_EVERY_S)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        task = asyncio.create_task(retention())
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

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
