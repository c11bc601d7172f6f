"""The rule management service (port 8085): merchandising rules per tenant, and their preview.

Start with ``uvicorn --factory aisle.services.rules.app:create_app`` (``aisle serve`` does); settings come
from the ``AISLE_*`` environment when none are given. Rules live in object storage; search processes
pick up a change on their next request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from aisle.analytics.engine import AnalyticsEngine
from aisle.core.auth.dependencies import Authorizer
from aisle.core.config import Settings, load_settings
from aisle.core.storage.resolver import open_blob_store_from_settings
from aisle.core.tenancy import Tenants
from aisle.experiments.admin import ExperimentAdmin
from aisle.recs.serving.experiments import ContainerPromotion
from aisle.search.engine import SearchEngine
from aisle.search.experiment_promotion import SearchPromotion
from aisle.services.common.app import service_app
from aisle.services.rules.console.pages import mount_console
from aisle.services.rules.experiment_routes import router as experiment_router
from aisle.services.rules.routes import router
from aisle.services.rules.state import RulesState


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the rule management service (see the module docstring)."""
    settings = settings or load_settings()
    store = open_blob_store_from_settings(settings)
    engine = SearchEngine.from_settings(settings, store, tenants=Tenants(store))

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        engine.close()

    app = service_app(
        "rules",
        title="Aisle rule management service",
        description="Merchandising rules per tenant: conditions (query exact / contains / prefix / regex / "
        "any, time window, user group) and actions (pin, hide, boost, bury, filter, redirect, rewrite, "
        "external: to the tenant's external search service). "
        "Every rule has a version; a replace or delete naming a stale version gets 409 "
        "`rule_version_conflict` and changes nothing. `POST /rules/preview` runs a search with and "
        "without a rule. A/B experiments (`/experiments`): 2 to 5 variants of rules, hybrid, ranker and "
        "pipeline settings, a stable split by visitorId, start, stop, promote, and results per variant "
        "with 95% intervals, Benjamini-Hochberg adjusted p-values and a sample-ratio-mismatch check. "
        "Every endpoint but /health takes the `tenant` query parameter. Errors: "
        '`{"error": {"code", "message", "details"}}`. The merchandising console (HTML, sign-in with an '
        "access token) is served at `/`.",
        routers=[router, experiment_router],
        settings=settings,
        lifespan=lifespan,
        tenants=engine.tenants,
    )
    assert engine.rankers is not None
    app.state.rules = RulesState(
        settings=settings,
        store=store,
        engine=engine,
        experiments=ExperimentAdmin(
            engine.tenants,
            [ContainerPromotion(engine.tenants.scope), SearchPromotion(engine.tenants, engine.rankers)],
            AnalyticsEngine.from_settings(settings, store, record=False),
        ),
    )
    app.state.metrics.add_caches(engine.cache_sizes())
    app.state.authorizer = Authorizer(settings, store)
    mount_console(app)
    return app
