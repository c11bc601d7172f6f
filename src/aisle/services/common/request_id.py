"""Request ids: one per request, echoed in ``X-Request-Id``, carried by every log line of the request.

The id is the request's own ``X-Request-Id`` when it is 1 to 128 characters of ``A-Z a-z 0-9 . _ : -``
(so a proxy's or a client's id carries through), else a new one (32 hex digits, random). It is kept in
the ASGI scope (:func:`request_id_of`) and in a context variable for the request's task and the threads
it hands work to (:func:`current_request_id`); :class:`RequestIdFilter` copies it into log records as
``request_id``. Every response, errors included, has the ``X-Request-Id`` header, and error envelopes
carry it as ``error.requestId``.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

HEADER = b"x-request-id"
SCOPE_KEY = "aisle.request_id"
VALID_ID = re.compile(rb"[A-Za-z0-9._:-]{1,128}")

_current: ContextVar[str | None] = ContextVar("aisle_request_id", default=None)


def current_request_id() -> str | None:
    """The id of the request this code runs for, or None outside a request."""
    return _current.get()


def request_id_of(scope: Mapping[str, Any]) -> str | None:
    """The id given to the request of this ASGI scope (None before :class:`RequestIdMiddleware` ran)."""
    return scope.get(SCOPE_KEY)


def new_request_id() -> str:
    return os.urandom(16).hex()


def incoming_request_id(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The request's valid ``X-Request-Id``, or None when it is absent, too long or has unsafe characters."""
    for name, value in headers:
        if name == HEADER:
            return value.decode("ascii") if VALID_ID.fullmatch(value) else None
    return None


class RequestIdMiddleware:
    """Give each HTTP request an id (pure ASGI); add ``X-Request-Id`` to its response."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = incoming_request_id(scope["headers"]) or new_request_id()
        scope[SCOPE_KEY] = rid
        header = (HEADER, rid.encode())

        async def send_with_id(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), header]}
            await send(message)

        token = _current.set(rid)
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            _current.reset(token)


class RequestIdFilter(logging.Filter):
    """Sets ``record.request_id`` to the current request's id (``-`` outside a request); passes every record.

    Attach it to a handler (a filter on a handler sees the records of every logger), then use
    ``%(request_id)s`` in the handler's format; :data:`LOG_CONFIG` does both.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = _current.get() or "-"
        return True


LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"

LOG_CONFIG: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "aisle.services.common.request_id.RequestIdFilter"}},
    "formatters": {"default": {"format": LOG_FORMAT}},
    "handlers": {
        "default": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stderr",
            "formatter": "default",
            "filters": ["request_id"],
        }
    },
    "loggers": {
        "uvicorn": {"handlers": ["default"], "level": "INFO", "propagate": False},
        "uvicorn.error": {"level": "INFO"},
        "uvicorn.access": {"handlers": ["default"], "level": "INFO", "propagate": False},
    },
    "root": {"handlers": ["default"], "level": "WARNING"},
}
"""A ``logging.config.dictConfig`` for a service process (``aisle serve`` passes it to uvicorn's
``--log-config``): one stderr handler, every line with its request id, Aisle's loggers at WARNING."""
