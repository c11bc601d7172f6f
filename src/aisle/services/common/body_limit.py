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

Limits: ``default`` bytes (``AISLE_MAX_BODY_BYTES``), or ``upload`` bytes
(``AISLE_MAX_UPLOAD_BYTES``) on the multipart routes named in ``upload_paths``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import orjson
from starlette.exceptions import HTTPException

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
    """Refuse request bodies over ``default`` bytes (``upload`` bytes on ``upload_paths``) with a 413.

    Args:
        app: the ASGI app to wrap.
        default: the limit of every route, bytes.
        upload: the limit of the routes in ``upload_paths`` (exact request paths), bytes.
        envelope: the service's error envelope (``standard`` or ``predict``).
    """

    def __init__(
        self,
        app: Any,
        *,
        default: int,
        upload: int,
        upload_paths: Collection[str] = (),
        envelope: Envelope = "standard",
    ) -> None:
        self.app = app
        self.default = default
        self.upload = upload
        self.upload_paths = frozenset(upload_paths)
        self.envelope = envelope

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.upload if scope["path"] in self.upload_paths else self.default
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
