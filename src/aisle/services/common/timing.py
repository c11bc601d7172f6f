"""``Server-Timing: app;dur=<ms>`` on every response (W3C Server Timing), for server-side latency.

A plain ASGI middleware: it times from the request's arrival to the response start and costs a few
microseconds (no BaseHTTPMiddleware body buffering).
"""

from __future__ import annotations

import time
from typing import Any

Scope = dict[str, Any]


class ServerTimingMiddleware:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()

        async def send_with_timing(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                dur = (time.perf_counter() - start) * 1000
                headers = list(message.get("headers", []))
                headers.append((b"server-timing", f"app;dur={dur:.3f}".encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_timing)
