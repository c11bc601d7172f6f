"""``Server-Timing: app;dur=<ms>`` on every response (W3C Server Timing), for server-side latency,
followed by the named durations the request's code recorded (:mod:`aisle.core.timing`), e.g. the
search stages: ``app;dur=1.502, understand;dur=0.061, retrieve;dur=0.512, facets;dur=0.301``.

``app`` comes first and always: a reader may take the first ``dur=`` of the header as the total.
A plain ASGI middleware: it times from the request's arrival to the response start and costs a few
microseconds (no BaseHTTPMiddleware body buffering).
"""

from __future__ import annotations

import time
from typing import Any

from aisle.core.timing import open_timings

Scope = dict[str, Any]


def server_timing(app_seconds: float, timings: list[tuple[str, float]]) -> bytes:
    """The header value: ``app;dur=<ms>`` then ``<name>;dur=<ms>`` per entry, milliseconds to 3 decimals."""
    parts = [f"app;dur={app_seconds * 1000:.3f}"]
    parts.extend(f"{name};dur={seconds * 1000:.3f}" for name, seconds in timings)
    return ", ".join(parts).encode()


def app_ms(header: str) -> float:
    """The ``app`` duration (ms) of a ``Server-Timing`` header this middleware wrote."""
    for part in header.split(","):
        name, _, params = part.strip().partition(";")
        if name == "app":
            return float(params.partition("dur=")[2].split(";")[0])
    raise ValueError(f"no app duration in Server-Timing {header!r}")


class ServerTimingMiddleware:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        timings = open_timings()

        async def send_with_timing(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                value = server_timing(time.perf_counter() - start, timings)
                message = {**message, "headers": [*message.get("headers", []), (b"server-timing", value)]}
            await send(message)

        await self.app(scope, receive, send_with_timing)
