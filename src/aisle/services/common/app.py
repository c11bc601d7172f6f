"""What every service's ``create_app`` shares: the FastAPI app, its error envelope and ``GET /health``.

Each service builds its resources, then its app with :func:`service_app`, which adds the routers (theirs
and :data:`health_router`), the error handlers and, where the service has it, ``Server-Timing``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request

from aisle import __version__
from aisle.services.common.errors import Envelope, error_responses, install_error_handlers
from aisle.services.common.params import refuse_unknown_query_params
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
) -> FastAPI:
    """A service's FastAPI app: ``routers`` then ``/health`` (answering ``service``), one error envelope.

    Args:
        service: the name ``GET /health`` answers with (``app.state.service``).
        title, description: of the OpenAPI document; ``version`` is Aisle's.
        routers: the service's routes, included in this order.
        lifespan: the app's lifespan context, if it has resources to open or close.
        envelope: ``standard``, or ``predict`` for the spec's ``{success, response_data, error}``.
        server_timing: add ``Server-Timing: app;dur=<ms>`` to every response.
    """
    app = FastAPI(title=title, version=__version__, description=description, lifespan=lifespan)
    app.state.service = service
    if server_timing:
        app.add_middleware(ServerTimingMiddleware)
    install_error_handlers(app, envelope)
    # Every operation refuses query parameters it does not declare (400 unknown_parameter), and every
    # one but /health may need object storage or Redis: 503 with Retry-After while they are down.
    guard = [Depends(refuse_unknown_query_params)]
    for router in routers:
        app.include_router(router, dependencies=guard, responses=error_responses(400, 503))
    app.include_router(health_router, dependencies=guard, responses=error_responses(400))
    return app
