"""The search service (port 8080): search, catalog, categories, tenants, proxied recommendations.

Start with ``uvicorn --factory aisle.services.search.app:create_app`` (``aisle serve`` does).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from fastapi import FastAPI
from starlette.middleware import Middleware

from aisle.catalog.compaction import Compactor
from aisle.catalog.compaction_child import fold_in_child
from aisle.catalog.writer import CatalogWriter
from aisle.core.auth.dependencies import Authorizer
from aisle.core.config import Settings, load_settings
from aisle.core.memory import freeze_heap
from aisle.core.storage.resolver import open_blob_store_from_settings
from aisle.search.engine import SearchEngine
from aisle.search.follower import LogFollower
from aisle.services.common.app import service_app
from aisle.services.common.outcomes import open_outcomes
from aisle.services.search import (
    catalog_routes,
    recs_relay,
    routes,
    shop,
    suggest_routes,
    tenant_routes,
    vector_routes,
)
from aisle.services.search.fast_lane import SearchFastLane
from aisle.services.search.state import SearchState

log = logging.getLogger("aisle.search")


def create_app(settings: Settings | None = None, *, preload: bool = True) -> FastAPI:
    """Build the search service. ``preload`` opens every tenant's index, vectors and models at start-up
    (:meth:`SearchEngine.warm_up`)."""
    settings = settings or load_settings()
    store = open_blob_store_from_settings(settings)
    state = SearchState(
        settings=settings,
        engine=SearchEngine.from_settings(settings, store),
        predict_client=httpx.AsyncClient(base_url=settings.predict_url, timeout=5.0),
    )
    storefront = shop.Storefront.open(settings, store)
    catalog = CatalogWriter(state.engine.tenants)  # product writes, into the change log
    compactor = Compactor(
        state.engine.tenants,
        every=settings.catalog_compact_seconds,
        watched=state.engine.indexes.loaded,
        fold=fold_in_child(settings.storage_url) if settings.catalog_applier == "process" else None,
    )
    catalog.on_write = compactor.wake
    follower = LogFollower(  # writes made searchable
        state.engine.indexes, settings.catalog_follow_seconds, settings.catalog_busy_follow_seconds
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if preload:
            state.engine.warm_up()
        if settings.gc_freeze:
            freeze_heap()  # the app and what warm-up loaded: see aisle.core.memory
        compactor.start()
        follower.start()
        yield
        follower.stop()
        compactor.stop()
        await state.predict_client.aclose()
        await storefront.edit.aclose()
        state.engine.close()
        if state.outcomes is not None:
            state.outcomes.close()

    authorizer = Authorizer(settings, store)
    lane = Middleware(
        SearchFastLane,
        state=state,
        authorizer=authorizer,
        route=routes.search_get_route(),
        post_route=routes.search_post_route(),
        parse=routes.search_request_of,
        enabled=settings.search_fast_lane,
    )
    app = service_app(
        "search",
        title="Aisle search service",
        description="Multi-stage product search (query understanding, merchandising rules, staged BM25 "
        "retrieval, facets), catalog browsing, categories and tenants. Errors use one envelope: "
        '`{"error": {"code", "message", "details"}}`.',
        routers=[
            routes.router,
            suggest_routes.router,
            vector_routes.router,
            recs_relay.router,
            shop.router,
            tenant_routes.router,
            catalog_routes.router,
        ],
        bulk_paths=["/tenants/{tenant}", "/products/batch", "/catalog/import"],  # up to AISLE_MAX_BULK_BYTES
        lifespan=lifespan,
        settings=settings,
        tenants=state.engine.tenants,
        inner=[lane],
    )
    app.state.metrics.add_caches(state.engine.cache_sizes())
    if state.engine.external is not None:
        app.state.metrics.add_breaker_states(state.engine.external.states)
    state.outcomes = open_outcomes(app, "search", settings, store)
    app.state.search = state
    app.state.shop = storefront
    app.state.catalog = catalog
    app.state.authorizer = authorizer
    return app
