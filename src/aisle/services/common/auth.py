"""The scope dependency of every service's protected routes: the app's Authorizer, found in its state.

Routes are module-level functions on a module-level router, so they cannot close over an Authorizer: the
app factory puts it at ``app.state.authorizer`` and :func:`require_scope` reads it there on each request.
The checks are :meth:`Authorizer.require`'s, by the same code (:meth:`Authorizer.authorize`)::

    @router.get("/rules", dependencies=[Depends(require_scope(SEARCH_READ))])
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Depends, Request

from aisle.core.auth.dependencies import Authorizer, Principal, check_scope


def require_scope(
    scope: str, *, tenant_default: str | None = None
) -> Callable[[Request], Awaitable[Principal | None]]:
    """A dependency checking the bearer token, ``scope`` and the request's tenants. Returns the Principal.

    Raises (from the dependency): Unauthorized / InvalidToken (401), InsufficientScope / TenantForbidden
    (403), Unavailable (503) when the keys cannot be fetched. ``ValueError`` here for an unknown scope.
    The function carries the scope as its ``scope`` attribute (route introspection, as ``require``'s).
    """
    check_scope(scope)

    async def authorize(request: Request) -> Principal | None:
        authorizer: Authorizer = request.app.state.authorizer
        return await authorizer.authorize(request, scope, tenant_default)

    authorize.__name__ = f"require_{scope.replace(':', '_')}"
    authorize.scope = scope  # type: ignore[attr-defined]
    return authorize


def scoped(scope: str, *, tenant_default: str | None = None) -> Any:
    """``Depends(require_scope(scope))``, for a route's ``dependencies=[...]``."""
    return Depends(require_scope(scope, tenant_default=tenant_default))
