"""The search service (port 8080): search, catalog, categories, tenants, proxied recommendations.

Start with ``uvicorn --factory aisle.services.search.app:create_app`` (``aisle serve`` does).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import httpx
from fastapi import FastAPI

from aisle import __version__
from aisle.core.auth.dependencies import Authorizer
from aisle.core.config import Settings, load_settings
from aisle.core.errors import AisleError
from aisle.core.storage.resolver import open_blob_store_from_settings
from aisle.core.tenancy import Tenants
from aisle.search.indexes import IndexRegistry
from aisle.search.pipeline import DEFAULT_STAGES, SearchPipeline
from aisle.search.ranking.features import DocTerms
from aisle.search.ranking.store import RankerStore
from aisle.search.rules.book import RuleBooks
from aisle.search.stages.rerank import bind_rankers
from aisle.search.stages.rules import bind_rules
from aisle.services.common.errors import install_error_handlers
from aisle.services.common.timing import ServerTimingMiddleware

log = logging.getLogger("aisle.search")


@dataclass
class SearchState:
    """Resources of one search-service process (reached through ``request.app.state.search``)."""

    settings: Settings
    tenants: Tenants
    indexes: IndexRegistry
    pipeline: SearchPipeline
    authorizer: Authorizer
    predict_client: httpx.AsyncClient
    warm_ups: list[Callable[[], None]] = field(default_factory=list)  # run at start-up when preloading


def create_app(settings: Settings | None = None, *, preload: bool = True) -> FastAPI:
    """Build the search service. ``preload`` opens every tenant's index at start-up."""
    settings = settings or load_settings()
    store = open_blob_store_from_settings(settings)
    tenants = Tenants(store)
    rankers = RankerStore(store)
    state = SearchState(
        settings=settings,
        tenants=tenants,
        indexes=IndexRegistry(tenants, settings.data_dir),
        pipeline=SearchPipeline(bind_rankers(bind_rules(DEFAULT_STAGES, RuleBooks(store)), rankers)),
        authorizer=Authorizer(settings, store),
        predict_client=httpx.AsyncClient(base_url=settings.predict_url, timeout=5.0),
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if preload:
            for tenant in tenants.names():
                try:
                    index = state.indexes.get(tenant)
                    if rankers.current(tenant) is not None:
                        DocTerms.of(index)  # the ranker's token table (seconds), not on a first query
                except AisleError as exc:
                    log.warning("tenant %s not loaded: %s", tenant, exc.message)
            for warm_up in state.warm_ups:
                try:
                    warm_up()
                except Exception:  # a failed warm-up only makes the first request slower
                    log.exception("start-up warm-up %s failed", getattr(warm_up, "__name__", warm_up))
        yield
        await state.predict_client.aclose()

    app = FastAPI(
        title="Aisle search service",
        version=__version__,
        description="Multi-stage product search (query understanding, merchandising rules, staged BM25 "
        "retrieval, facets), catalog browsing, categories and tenants. Errors use one envelope: "
        '`{"error": {"code", "message", "details"}}`.',
        lifespan=lifespan,
    )
    app.state.search = state
    app.add_middleware(ServerTimingMiddleware)
    install_error_handlers(app)
    from aisle.services.search.routes import build_router

    app.include_router(build_router(state))
    from aisle.services.search.suggest_routes import build_suggest_router

    app.include_router(build_suggest_router(state))
    from aisle.services.search.vector_routes import build_vector_router

    app.include_router(build_vector_router(state))
    return app
