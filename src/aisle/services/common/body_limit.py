"""A request body limit on every service: 413 ``payload_too_large`` before a byte past it is parsed.

A pure ASGI middleware (no BaseHTTPMiddleware buffering). It wraps ``receive``; when the app first asks
for the body (FastAPI does so right after routing, before dependencies and parsing):

* a ``Content-Length`` above the limit is refused at once, before any body byte is read;
* otherwise every ``http.request`` chunk is counted, so a chunked body (no ``Content-Length``) is cut
  off as soon as its total passes the limit. (A body longer than its ``Content-Length`` cannot get
  past: the HTTP server frames the body by that header.)

The middleware answers the 413 itself, in the service's error envelope, raises
:class:`BodyTooLarge` into the app to stop it, and drops whatever the app sends afterwards. A route
that never reads its body (a GET) is never refused: the server discards an unread body without
buffering it. RFC 9110 section 15.5.14 (413 Content Too Large).

Limits (:func:`route_limits`): ``AISLE_MAX_BODY_BYTES``; ``AISLE_MAX_UPLOAD_BYTES`` on multipart upload
routes; ``AISLE_MAX_BULK_BYTES`` on the bulk writes a service names (``POST /events``, ``PUT /vectors``,
``PUT /tenants/{tenant}``: a path template stands for every path it matches).
:func:`document_body_limits` adds the 413, with the limit, to the OpenAPI of every operation taking a body.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any

import orjson
from fastapi import FastAPI
from fastapi.params import Form
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute

from aisle.core.config import Settings
from aisle.core.errors import ErrorCode
from aisle.services.common.errors import Envelope, error_body
from aisle.services.common.request_id import request_id_of

Scope = dict[str, Any]
Message = dict[str, Any]


class BodyTooLarge(HTTPException):
    """Raised into the app from ``receive`` once the body is over the limit (an HTTPException, so FastAPI
    passes it on instead of turning it into a 400 "error parsing the body")."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is larger than the limit of {limit} bytes")
        self.limit = limit


def path_pattern(template: str) -> re.Pattern[str]:
    """The request paths of a route's path template: ``/tenants/{tenant}`` matches ``/tenants/wines``
    (a parameter is one path segment)."""
    parts = re.split(r"\{[^}]+\}", template)
    return re.compile("[^/]+".join(re.escape(part) for part in parts))


def content_length(scope: Scope) -> int | None:
    """The request's ``Content-Length`` as an int, or None (absent or not a number)."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class BodyLimitMiddleware:
    """Refuse request bodies over ``default`` bytes (``limits[path]`` on the paths it names) with a 413.

    Args:
        app: the ASGI app to wrap.
        default: the limit of every route, bytes.
        limits: other limits by request path or route path template (``/tenants/{tenant}``), bytes
            (:func:`route_limits`).
        envelope: the service's error envelope (``standard`` or ``predict``).
    """

    def __init__(
        self,
        app: Any,
        *,
        default: int,
        limits: Mapping[str, int] | None = None,
        envelope: Envelope = "standard",
    ) -> None:
        self.app = app
        self.default = default
        self.limits = {path: limit for path, limit in (limits or {}).items() if "{" not in path}
        self.templates = [
            (path_pattern(path), limit) for path, limit in (limits or {}).items() if "{" in path
        ]
        self.envelope = envelope

    def limit(self, path: str) -> int:
        """The limit of a request path: its exact entry, else the first path template it matches."""
        exact = self.limits.get(path)
        if exact is not None:
            return exact
        for pattern, limit in self.templates:
            if pattern.fullmatch(path):
                return limit
        return self.default

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit(scope["path"])
        declared = content_length(scope)
        received = 0
        refused = False
        started = False

        async def refuse() -> None:
            nonlocal refused
            refused = True
            if not started:
                await self._send_413(scope, send, limit)
            raise BodyTooLarge(limit)

        async def receive_within_limit() -> Message:
            nonlocal received
            if refused:
                return {"type": "http.disconnect"}
            if declared is not None and declared > limit:
                await refuse()
            message: Message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    await refuse()
            return message

        async def send_unless_refused(message: Message) -> None:
            nonlocal started
            if refused:
                return  # the 413 is the answer; the app's own rendering of BodyTooLarge is dropped
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive_within_limit, send_unless_refused)
        except Exception:
            if not refused:
                raise
            # the app was stopped by BodyTooLarge (or by the disconnect that follows it): answered already

    async def _send_413(self, scope: Scope, send: Any, limit: int) -> None:
        code = ErrorCode.PAYLOAD_TOO_LARGE
        error = {
            "code": str(code),
            "message": f"the request body is larger than the limit of {limit} bytes",
            "details": {"limit": limit},
        }
        body = orjson.dumps(error_body(error, self.envelope, request_id_of(scope)))
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": code.status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def route_limits(
    routes: Iterable[BaseRoute], settings: Settings, bulk_paths: Collection[str]
) -> dict[str, int]:
    """The limits other than ``settings.max_body_bytes``, by path: ``max_upload_bytes`` for the routes
    whose body is a multipart form, ``max_bulk_bytes`` for ``bulk_paths``."""
    limits = {path: settings.max_bulk_bytes for path in bulk_paths}
    for route in routes:
        if (
            isinstance(route, APIRoute)
            and route.body_field is not None
            and isinstance(route.body_field.field_info, Form)
        ):
            limits[route.path] = settings.max_upload_bytes
    return limits


BODY_METHODS = frozenset({"post", "put", "patch"})


def document_body_limits(app: FastAPI, default: int, limits: Mapping[str, int], error_schema: str) -> None:
    """Have ``app.openapi()`` document a 413 on every operation that takes a body, naming its limit.

    ``error_schema`` is the name of the error envelope's component schema (``ErrorEnvelope`` or
    ``PredictErrorEnvelope``), which the other error responses have put in the document already.
    """
    build = app.openapi

    def with_413(schema: dict[str, Any]) -> dict[str, Any]:
        assert error_schema in schema["components"]["schemas"], error_schema
        content = {"application/json": {"schema": {"$ref": f"#/components/schemas/{error_schema}"}}}
        for path, operations in schema["paths"].items():
            limit = limits.get(path, default)
            for method, operation in operations.items():
                if method in BODY_METHODS or "requestBody" in operation:
                    operation["responses"]["413"] = {
                        "description": f"payload_too_large: the request body is over {limit} bytes",
                        "content": content,
                    }
        return schema

    def openapi() -> dict[str, Any]:
        # build() keeps its document in app.openapi_schema: the 413s are added once, in place
        return app.openapi_schema if app.openapi_schema is not None else with_413(build())

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way to extend the document
