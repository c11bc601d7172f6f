"""What every service's ``create_app`` shares: the FastAPI app, its error envelope, ``GET /health`` and
``GET /metrics``, request ids and the request body limit.

Each service builds its resources, then its app with :func:`service_app`, which adds the routers (theirs
and :data:`health_router`), the error handlers, and the middleware, outermost first: request id
(:mod:`.request_id`), metrics (:mod:`.metrics`), body limit (:mod:`.body_limit`) and, where the
service has it, ``Server-Timing``. A service then registers its caches with
``app.state.metrics.add_caches(...)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.params import Form
from fastapi.routing import APIRoute

from aisle import __version__
from aisle.core.config import Settings, load_settings
from aisle.core.tenancy import Tenants
from aisle.services.common.body_limit import BodyLimitMiddleware
from aisle.services.common.errors import Envelope, error_responses, install_error_handlers
from aisle.services.common.metrics import MetricsMiddleware, ServiceMetrics, metrics_endpoint
from aisle.services.common.params import refuse_unknown_query_params
from aisle.services.common.request_id import RequestIdMiddleware
from aisle.services.common.schemas import Health
from aisle.services.common.timing import ServerTimingMiddleware

Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[Any]]

health_router = APIRouter()


@health_router.get("/health", response_model=Health)
def health(request: Request) -> Health:
    return Health(service=request.app.state.service, version=__version__)


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
) -> FastAPI:
    """A service's FastAPI app: ``routers`` then ``/health`` (answering ``service``), one error envelope.

    Args:
        service: the name ``GET /health`` answers with (``app.state.service``), the metrics' label.
        title, description: of the OpenAPI document; ``version`` is Aisle's.
        routers: the service's routes, included in this order.
        lifespan: the app's lifespan context, if it has resources to open or close.
        envelope: ``standard``, or ``predict`` for the spec's ``{success, response_data, error}``.
        server_timing: add ``Server-Timing: app;dur=<ms>`` to every response.
        settings: the body limits (``max_body_bytes``, ``max_upload_bytes``); default from the environment.
        tenants: the service's tenants: per-tenant counts name those it has loaded, and its
            configuration cache is reported as ``aisle_cache_entries{cache="tenant_configs"}``.
    """
    settings = settings if settings is not None else load_settings()
    app = FastAPI(title=title, version=__version__, description=description, lifespan=lifespan)
    app.state.service = service
    metrics = ServiceMetrics(service, known_tenant=tenants.known if tenants is not None else None)
    app.state.metrics = metrics
    if tenants is not None:
        metrics.add_caches({"tenant_configs": tenants.entry_count})
    install_error_handlers(app, envelope)
    # Every operation refuses query parameters it does not declare (400 unknown_parameter); every one
    # that takes a body may answer 413 payload_too_large.
    guard = [Depends(refuse_unknown_query_params)]
    for router in (*routers, health_router):
        document_body_limit(router, envelope)
        app.include_router(router, dependencies=guard, responses=error_responses(400, envelope=envelope))
    app.add_route("/metrics", metrics_endpoint, methods=["GET"], include_in_schema=False)
    # add_middleware puts each one outside the ones before it
    if server_timing:
        app.add_middleware(ServerTimingMiddleware)
    app.add_middleware(
        BodyLimitMiddleware,
        default=settings.max_body_bytes,
        upload=settings.max_upload_bytes,
        upload_paths=upload_paths(routers),
        envelope=envelope,
    )
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    app.add_middleware(RequestIdMiddleware)
    return app


BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


def takes_body(route: APIRoute) -> bool:
    return route.body_field is not None or bool((route.methods or set()) & BODY_METHODS)


def document_body_limit(router: APIRouter, envelope: Envelope) -> None:
    """Add 413 (``payload_too_large``) to the OpenAPI responses of every operation that takes a body."""
    for route in router.routes:
        if isinstance(route, APIRoute) and takes_body(route) and 413 not in route.responses:
            route.responses.update(error_responses(413, envelope=envelope))


def upload_paths(routers: Sequence[APIRouter]) -> list[str]:
    """Paths of the routes whose body is a multipart form (they get ``max_upload_bytes``)."""
    return [
        route.path
        for router in routers
        for route in router.routes
        if isinstance(route, APIRoute)
        and route.body_field is not None
        and isinstance(route.body_field.field_info, Form)
    ]
