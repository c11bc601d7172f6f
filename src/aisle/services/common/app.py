"""What every service's ``create_app`` shares: the FastAPI app, its error envelope, ``GET /health`` and
``GET /metrics``, request ids and the request body limit.

Each service builds its resources, then its app with :func:`service_app`, which adds the routers (theirs
and :data:`health_router`), the error handlers, and the middleware, outermost first: request id
(:mod:`.request_id`), metrics (:mod:`.metrics`), body limit (:mod:`.body_limit`) and, where the
service has it, ``Server-Timing``. A service then registers its caches with
``app.state.metrics.add_caches(...)``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from starlette.middleware import Middleware

from aisle import __version__
from aisle.core.builds_resolver import open_build_board
from aisle.core.config import Settings, load_settings
from aisle.core.tenancy import Tenants
from aisle.services.common.body_limit import BodyLimitMiddleware, document_body_limits, route_limits
from aisle.services.common.errors import Envelope, error_responses, install_error_handlers
from aisle.services.common.metrics import MetricsMiddleware, ServiceMetrics, metrics_endpoint
from aisle.services.common.params import QueryParamGuard
from aisle.services.common.request_id import RequestIdMiddleware
from aisle.services.common.schemas import BuildStatus, Health
from aisle.services.common.timing import ServerTimingMiddleware

Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[Any]]

health_router = APIRouter()


HEALTH_BUILDS_TTL_S = 1.0


@health_router.get("/health", response_model=Health)
def health(request: Request) -> Health:
    """The service, its version and each tenant's background builds (the build board, read at most once a
    second: a few files, or one Redis round trip when ``AISLE_REDIS_URL`` is set)."""
    state = request.app.state
    now = time.monotonic()
    cached = getattr(state, "health_builds", None)
    if cached is None or now - cached[0] >= HEALTH_BUILDS_TTL_S:
        by_tenant = state.build_board.by_tenant()
        builds = {t: [BuildStatus.model_validate(b.to_dict()) for b in bs] for t, bs in by_tenant.items()}
        cached = state.health_builds = (now, builds)
    return Health(service=state.service, version=__version__, builds=cached[1])


def service_app(
    service: str,
    *,
    title: str,
    description: str,
    routers: Sequence[APIRouter],
    lifespan: Lifespan | None = None,
    envelope: Envelope = "standard",
    server_timing: bool = True,
    settings: Settings | None = None,
    tenants: Tenants | None = None,
    bulk_paths: Collection[str] = (),
    inner: Sequence[Middleware] = (),
) -> FastAPI:
    """A service's FastAPI app: ``routers`` then ``/health`` (answering ``service``), one error envelope.

    Args:
        service: the name ``GET /health`` answers with (``app.state.service``), the metrics' label.
        title, description: of the OpenAPI document; ``version`` is Aisle's.
        routers: the service's routes, included in this order.
        lifespan: the app's lifespan context, if it has resources to open or close.
        envelope: ``standard``, or ``predict`` for the spec's ``{success, response_data, error}``.
        server_timing: add ``Server-Timing: app;dur=<ms>`` to every response.
        settings: the body limits (``max_body_bytes``, ``max_upload_bytes`` on multipart routes,
            ``max_bulk_bytes`` on ``bulk_paths``); default: from the environment.
        tenants: the service's tenants: per-tenant counts name those it has loaded, and its
            configuration cache is reported as ``aisle_cache_entries{cache="tenant_configs"}``.
        bulk_paths: paths of bulk writes whose documented batch can pass ``max_body_bytes``.
        inner: ASGI middlewares placed inside the service's own (request id, metrics, Server-Timing,
            body limit), in front of the router, outermost first (the search service's fast lane).
    """
    settings = settings if settings is not None else load_settings()
    app = FastAPI(title=title, version=__version__, description=description, lifespan=lifespan)
    app.state.service = service
    app.state.data_dir = settings.data_dir
    app.state.build_board = open_build_board(settings)
    metrics = ServiceMetrics(service, known_tenant=tenants.known if tenants is not None else None)
    app.state.metrics = metrics
    if tenants is not None:
        metrics.add_caches({"tenant_configs": tenants.entry_count})
    install_error_handlers(app, envelope)
    # Every operation refuses query parameters it does not declare (400 unknown_parameter); every one
    # but /health may need object storage or Redis (503 with Retry-After while they are down); every one
    # that takes a body may answer 413 payload_too_large.
    guard = [Depends(QueryParamGuard())]  # this app's: it keeps each route's declared parameters
    for router in routers:
        app.include_router(router, dependencies=guard, responses=error_responses(400, 503, envelope=envelope))
    app.include_router(health_router, dependencies=guard, responses=error_responses(400, envelope=envelope))
    app.add_route("/metrics", metrics_endpoint, methods=["GET"], include_in_schema=False)
    # the routers' own routes: FastAPI keeps an included router as one entry of app.routes
    limits = route_limits([r for router in routers for r in router.routes], settings, bulk_paths)
    error_schema = "PredictErrorEnvelope" if envelope == "predict" else "ErrorEnvelope"
    document_body_limits(app, settings.max_body_bytes, limits, error_schema)
    # add_middleware puts each one outside the ones before it
    for middleware in reversed(inner):
        app.add_middleware(middleware.cls, *middleware.args, **middleware.kwargs)
    if server_timing:
        app.add_middleware(ServerTimingMiddleware)
    app.add_middleware(BodyLimitMiddleware, default=settings.max_body_bytes, limits=limits, envelope=envelope)
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    app.add_middleware(RequestIdMiddleware)
    return app
