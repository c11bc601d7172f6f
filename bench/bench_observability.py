"""What request ids, metrics and the body limit cost per request (an in-process ASGI loop, no HTTP).

Prints microseconds per request added by the middleware :func:`aisle.services.common.app.service_app`
puts around every route (request id, metrics, body limit), measured against a bare ASGI endpoint that
answers at once, first with prometheus-client in one process, then in multiprocess mode (as under
``aisle serve``, where every observation writes to a memory-mapped file), in a child process because
prometheus-client picks its mode when imported.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REQUESTS = 50_000


class _Route:
    path = "/search"


async def _endpoint(scope: dict[str, Any], receive: Any, send: Any) -> None:
    scope["route"] = _Route
    await receive()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"json")]})
    await send({"type": "http.response.body", "body": b"{}"})


async def _per_request(app: Any, n: int) -> float:
    headers = [(b"content-type", b"application/json"), (b"content-length", b"40")]
    base = {"type": "http", "method": "POST", "path": "/search", "headers": headers, "query_string": b""}
    body = {"type": "http.request", "body": b'{"tenant": "shop", "query": "red shoes"}', "more_body": False}

    async def receive() -> dict[str, Any]:
        return body

    async def send(message: dict[str, Any]) -> None:
        return None

    start = time.perf_counter()
    for _ in range(n):
        await app(dict(base), receive, send)
    return (time.perf_counter() - start) / n


def measure() -> float:
    """Microseconds the three middlewares add to one request (best of three runs)."""
    from aisle.services.common.body_limit import BodyLimitMiddleware
    from aisle.services.common.metrics import MetricsMiddleware, ServiceMetrics
    from aisle.services.common.request_id import RequestIdMiddleware

    metrics = ServiceMetrics("search", known_tenant=lambda t: True)
    wrapped = RequestIdMiddleware(MetricsMiddleware(BodyLimitMiddleware(_endpoint, default=1 << 20), metrics))
    bare = min(asyncio.run(_per_request(_endpoint, REQUESTS)) for _ in range(3))
    full = min(asyncio.run(_per_request(wrapped, REQUESTS)) for _ in range(3))
    return 1e6 * (full - bare)


def main(data_dir: Path) -> None:
    print(f"request id + metrics + body limit, one process: {measure():.1f} us per request")
    with tempfile.TemporaryDirectory() as multiproc:
        env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": multiproc}
        code = "from bench.bench_observability import measure; print(f'{measure():.1f}')"
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
        )
        figure = done.stdout.strip() or done.stderr.strip()[-500:]
    print(f"request id + metrics + body limit, multiprocess mode: {figure} us per request")
