"""Request parameters shared by every service, so each is declared and validated by one rule."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Path, Query, Request

from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.tenancy import TENANT_NAME
from aisle.core.validation import ID_PATTERN

TENANT_PATTERN = TENANT_NAME.pattern
"""A tenant name: 1-64 lowercase letters, digits, ``-`` or ``_``, starting with a letter or digit."""

TenantQuery = Annotated[
    str,
    Query(
        pattern=TENANT_PATTERN,
        description="Tenant the request is scoped to (1-64 lowercase letters, digits, '-' or '_').",
        examples=["fashion"],
    ),
]
"""The ``?tenant=`` query parameter of every service; a name outside the pattern is a 422."""

ResourceIdPath = Annotated[
    str,
    Path(
        pattern=ID_PATTERN,
        description="1-128 letters, digits, '_', '.' or '-', starting with a letter or digit.",
    ),
]
"""A resource id in a path (rule, container, model, job); anything else is a 422 before any lookup."""


def declared_query_params(route: Any) -> frozenset[str]:
    """Names (aliases) of every query parameter ``route`` and its dependencies declare, with ``tenant``.

    ``route``: a FastAPI ``APIRoute``. Walks its dependency tree (microseconds per dependency); the
    guard (:class:`QueryParamGuard`) keeps the answer per route.
    """
    names = {"tenant"}  # read by the token check on every protected route, body tenant or not
    pending = [route.dependant]
    while pending:  # the route's own parameters and those of its dependencies, recursively
        dependant = pending.pop()
        names.update(field.alias for field in dependant.query_params)
        pending.extend(dependant.dependencies)
    return frozenset(names)


class QueryParamGuard:
    """Every route's guard: a query parameter the operation does not declare is a 400, never ignored.

    A misspelt parameter (``?query=`` where ``q`` is meant, ``?tennant=``) would otherwise change nothing
    and return an unfiltered answer that looks right. ``tenant`` is always declared: the token check
    compares it with the token's tenants on every route, including those that take the tenant in the body.

    One per app, made by the app factory (``Depends(QueryParamGuard())`` on every router); it keeps each
    of the app's routes' declared parameters (:func:`declared_query_params`), so the tree is walked once.
    """

    def __init__(self) -> None:
        self._declared: dict[int, frozenset[str]] = {}

    def declared(self, route: Any) -> frozenset[str]:
        """:func:`declared_query_params` of ``route``, worked out on its first request."""
        key = id(route)  # the app's routes live as long as the app, and so does this guard
        found = self._declared.get(key)
        if found is None:
            found = self._declared[key] = declared_query_params(route)
        return found

    async def __call__(self, request: Request) -> None:
        """Check one request's query parameters against its route's.

        Raises:
            BadRequest: ``unknown_parameter``, naming the unknown parameters and the declared ones.
        """
        route = request.scope.get("route")
        if route is None or not request.query_params:
            return
        declared = self.declared(route)
        unknown = sorted(set(request.query_params) - declared)
        if unknown:
            raise BadRequest(
                f"unknown query parameter(s): {', '.join(unknown)}; this operation takes: "
                + (", ".join(sorted(declared)) or "none"),
                code=ErrorCode.UNKNOWN_PARAMETER,
                details={"unknown": unknown, "allowed": sorted(declared)},
            )
