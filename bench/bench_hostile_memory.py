"""Memory of the edit and rules services under 100,000 hostile requests (issue 16's "within 10%").

Each service runs as ``make run`` runs it (uvicorn, one worker) on the fashion demo tenant. A seeded
generator sends a mix a careful attacker would: unknown tenants and ids (valid and malformed), numbers
beyond 2^53, control characters, undeclared parameters, oversized values, schema-valid writes to fresh
visitors and users (edit), previews of random draft rules (rules), and ordinary reads. The resident
memory of the process is read after a warm-up of ``WARMUP`` requests and again after ``REQUESTS`` more;
the ratio is the figure. Statuses are counted: any 5xx is reported.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from bench.bench_rules import _setup
from bench.search_server import ServiceProcess

WARMUP = 10_000
REQUESTS = int(__import__("os").environ.get("BENCH_HOSTILE_REQUESTS", 100_000))
CONCURRENCY = 16
Request = tuple[str, str, dict[str, Any], Any]


def _noise(rng: random.Random) -> str:
    """An id-like string: valid, too long, or with control and odd characters."""
    kind = rng.random()
    if kind < 0.5:
        return f"x{rng.randrange(10**9)}"
    if kind < 0.7:
        return "0" * rng.choice((129, 256, 300))
    return "a" + rng.choice(("\u000b", "\u0016", "%", "/", "\u00e9", " ", "\u202e")) + str(rng.randrange(99))


def _segment(rng: random.Random) -> str:
    """:func:`_noise` as a path segment: percent-encoded, so the server receives the control characters."""
    return quote(_noise(rng), safe="")


def _number(rng: random.Random) -> Any:
    return rng.choice((1e20, 2**63 - 1, -(2**63), 1e308, 2**53, rng.uniform(-1e6, 1e6), 7))


def edit_request(rng: random.Random) -> Request:
    t = {"tenant": rng.choice(("fashion", "fashion", "fashion", f"t{rng.randrange(10**6)}"))}
    r = rng.random()
    if r < 0.2:
        return "GET", f"/models/{_segment(rng)}", t, None
    if r < 0.3:
        return "GET", f"/jobs/{_segment(rng)}", t, None
    if r < 0.4:
        return "GET", f"/containers/{_segment(rng)}", t, None
    if r < 0.5:
        slot = {"slotConfigId": "main", "modelId": _noise(rng)}
        return "POST", "/containers", t, {"containerId": _noise(rng), "slotConfigurations": [slot]}
    if r < 0.7:
        event = {
            "visitorId": f"v{rng.randrange(10**7)}",
            "eventType": rng.choice(("view", "add-to-cart", "nope")),
            "productId": str(rng.randrange(10**5)),
            "timestamp": rng.choice((time.time(), 9e18, "9999-12-31T23:59:59Z", 1.6e9)),
        }
        return "POST", "/events", t, event
    if r < 0.8:
        return (
            "POST",
            "/user_features",
            t,
            {"userId": f"u{rng.randrange(10**7)}", "features": {"a": _number(rng)}},
        )
    if r < 0.9:
        return (
            "GET",
            "/events",
            {**t, "visitorId": f"v{rng.randrange(10**7)}", rng.choice(("x", "limit")): "1"},
            None,
        )
    return "GET", "/containers", t, None


def rules_request(rng: random.Random) -> Request:
    t = {"tenant": rng.choice(("fashion", "fashion", "fashion", f"t{rng.randrange(10**6)}"))}
    r = rng.random()
    if r < 0.3:
        return "GET", f"/rules/{_segment(rng)}", t, None
    if r < 0.4:
        return "GET", "/rules", {**t, rng.choice(("limit", "lmit")): str(rng.randrange(300))}, None
    draft = {
        "name": "probe",
        "conditions": {"query": {"match": "contains", "value": rng.choice(("shoes", "red", "watch"))}},
        "actions": [
            rng.choice(
                (
                    {"type": "filter", "filters": [{"field": "year", "value": _number(rng)}]},
                    {"type": "redirect", "url": rng.choice(("/sale", "//evil.example", "https://\u0096"))},
                    {"type": "boost", "condition": [{"field": "brand", "value": "Nike"}], "weight": 10},
                    {"type": "hide", "productIds": [_noise(rng)]},
                )
            )
        ],
    }
    if r < 0.8:
        search = {
            "query": rng.choice(("shoes", "red shirt", "", "x" * 600)),
            "size": rng.choice((5, 20, 101)),
        }
        return "POST", "/rules/preview", t, {"search": search, "rule": draft}
    return "PUT", f"/rules/{_segment(rng)}", t, {**draft, "version": rng.randrange(1, 5)}


async def _send(url: str, make: Callable[[random.Random], Request], count: int, seed: int) -> Counter[int]:
    rng = random.Random(seed)
    statuses: Counter[int] = Counter()
    queue: asyncio.Queue[Request | None] = asyncio.Queue(maxsize=CONCURRENCY * 4)

    async def worker(client: httpx.AsyncClient) -> None:
        while (item := await queue.get()) is not None:
            method, path, params, body = item
            try:
                r = await client.request(method, path, params=params, json=body)
                statuses[r.status_code] += 1
            except Exception:  # a worker that died would leave the queue full and the run hung
                statuses[0] += 1

    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        workers = [asyncio.create_task(worker(client)) for _ in range(CONCURRENCY)]
        for _ in range(count):
            await queue.put(make(rng))
        for _ in workers:
            await queue.put(None)
        await asyncio.gather(*workers)
    return statuses


def measure(name: str, module: str, make: Callable[[random.Random], Request], env: dict[str, str]) -> None:
    service = ServiceProcess(module, env, workers=1)
    try:
        service.wait_ready()
        start_rss = service.rss_mb()
        asyncio.run(_send(service.url, make, WARMUP, seed=1))
        before = service.rss_mb()
        started = time.perf_counter()
        statuses = asyncio.run(_send(service.url, make, REQUESTS, seed=2))
        elapsed = time.perf_counter() - started
        after = service.rss_mb()
    finally:
        service.stop()
    server_errors = sum(n for s, n in statuses.items() if s >= 500 or s == 0)
    print(
        f"{name}: RSS at start {start_rss:.0f} MiB, after {WARMUP:,} warm-up requests {before:.0f} MiB, "
        f"after {REQUESTS:,} more {after:.0f} MiB (x{after / before:.3f}); {REQUESTS / elapsed:.0f} req/s; "
        f"5xx or failed: {server_errors}; statuses {dict(sorted(statuses.items()))}"
    )


def main(data_dir: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp_name:
        env = _setup(Path(tmp_name), data_dir)
        measure("edit", "aisle.services.edit.app", edit_request, env)
        measure("rules", "aisle.services.rules.app", rules_request, env)
