"""The catalog-search proxy service (port 8082): search, autocomplete and visual search answered by each
tenant's external retail search service (interface spec, "Catalog-search proxy service").

Start with ``uvicorn --factory aisle.services.proxy.app:create_app`` (``aisle serve`` does). The backend
of a tenant is chosen by its ``crs_config.json`` (Typesense or Google Cloud Retail); see
:mod:`aisle.search.external`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from aisle.core.auth.dependencies import Authorizer
from aisle.core.config import Settings, load_settings
from aisle.core.storage.resolver import open_blob_store_from_settings
from aisle.search.external.proxy import ExternalSearchProxy
from aisle.services.common.app import service_app
from aisle.services.common.outcomes import open_outcomes
from aisle.services.proxy import routes
from aisle.services.proxy.state import ProxyState


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the proxy service (see the module docstring)."""
    settings = settings or load_settings()
    store = open_blob_store_from_settings(settings)
    state = ProxyState(settings=settings, proxy=ExternalSearchProxy.from_settings(settings, store))

    @asynccontextmanager
    async def lifespan(app_: FastAPI) -> AsyncIterator[None]:
        yield
        state.proxy.close()
        app_.state.outcomes.close()  # writes the answers still buffered

    app = service_app(
        "proxy",
        title="Aisle catalog-search proxy service",
        description="Search, autocomplete and visual search answered by the tenant's external retail "
        "search service (crs_config.json: Typesense or Google Cloud Retail), with the search service's "
        "request and response shapes. External service down: 502 `external_search_unavailable` (also "
        "while its circuit breaker is open); too slow: 504 `external_search_timeout`; none configured: "
        '409 `external_search_not_configured`. Errors: `{"error": {"code", "message", "details"}}`.',
        routers=[routes.router],
        lifespan=lifespan,
    )
    open_outcomes(app, "proxy", settings, store)
    app.state.proxy = state
    app.state.metrics.add_breaker_states(state.proxy.external.states)
    app.state.authorizer = Authorizer(settings, store)
    return app
