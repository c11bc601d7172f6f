"""Route dependencies that check the bearer token with the app's :class:`Authorizer`.

Routes are module-level functions, so they cannot close over an authorizer: :func:`require` returns a
dependency that finds it in ``request.app.state.authorizer`` (set by each service's ``create_app``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Depends, Request

from aisle.core.auth.dependencies import Authorizer, Principal
from aisle.core.auth.scopes import SCOPES


def require(
    scope: str, *, tenant_default: str | None = None
) -> Callable[[Request], Awaitable[Principal | None]]:
    """A dependency: the request's :class:`Principal` when its token holds ``scope`` and the tenants the
    request names (None with auth off). Carries ``scope`` as an attribute (tests read each route's).

    Raises (from the dependency): Unauthorized / InvalidToken (401), InsufficientScope / TenantForbidden
    (403), Unavailable (503). ``ValueError`` at import, for a scope not in :data:`SCOPES`.
    """
    if scope not in SCOPES:
        raise ValueError(f"unknown scope '{scope}'; known: {', '.join(SCOPES)}")

    async def authorize(request: Request) -> Principal | None:
        authorizer: Authorizer = request.app.state.authorizer
        return await authorizer.authorize(request, scope, tenant_default=tenant_default)

    authorize.__name__ = f"require_{scope.replace(':', '_')}"
    authorize.scope = scope  # type: ignore[attr-defined]
    return authorize


def scoped(scope: str, *, tenant_default: str | None = None) -> Any:
    """``Depends(require(scope))``, for a route's ``dependencies=[...]``."""
    return Depends(require(scope, tenant_default=tenant_default))
