"""FastAPI dependencies of the predict service: the engine and the token check, read from ``app.state``.

Both are ``async`` on purpose: they only read ``request.app.state.predict``, and an async dependency runs
inline where a plain ``def`` one would be handed to a thread (POST /predict answers warm requests
without one).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Request

from aisle.core.auth.dependencies import Principal
from aisle.core.auth.scopes import SCOPES
from aisle.recs.serving import PredictEngine
from aisle.services.predict.state import PredictState


def predict_state(request: Request) -> PredictState:
    """The process's :class:`PredictState` (set by ``create_app``)."""
    state: PredictState = request.app.state.predict
    return state


async def predict_engine(request: Request) -> PredictEngine:
    return predict_state(request).engine


Engine = Annotated[PredictEngine, Depends(predict_engine)]
"""The process's :class:`PredictEngine`, as a route parameter."""


def requires(scope: str) -> Callable[[Request], Awaitable[Principal | None]]:
    """A dependency checking the request's bearer token for ``scope`` and its tenants with the app's
    :class:`~aisle.core.auth.dependencies.Authorizer` (rules, errors and return value: its ``require``).

    The function carries ``scope`` as an attribute, as ``Authorizer.require``'s do (route introspection).
    Raises ValueError here, at import, for a scope not in :data:`SCOPES`.
    """
    if scope not in SCOPES:
        raise ValueError(f"unknown scope '{scope}'; known: {', '.join(SCOPES)}")

    async def authorize(request: Request) -> Principal | None:
        return await predict_state(request).authorizer.require(scope)(request)

    authorize.__name__ = f"require_{scope.replace(':', '_')}"
    authorize.scope = scope  # type: ignore[attr-defined]
    return authorize
