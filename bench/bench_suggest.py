"""Autocomplete benchmark: ``GET /suggestions`` latency on fashion and homedepot over real HTTP.

Figures printed (issue "Query understanding, merchandising rules ... autocomplete"):
- suggestion index build time per tenant (first request, then from the local disk cache), and the
  memory the suggestion indexes add to the search service;
- server-side latency (Server-Timing header), one uvicorn worker: p50/p99 (ms) per tenant, and the
  client-side figures for reference;
- the engine's CPU time per prefix in-process (p50/p99), which a busy shared machine cannot inflate.

Prefixes are realistic keystroke states: the first 1-12 characters of real Home Depot queries
(``homedepot/queries_dev.txt``) and of product names and brands, a fifth of those of 4+ characters
misspelt (two adjacent letters swapped or one dropped). Each distinct prefix is requested once per
round, so a result cache could not flatter the figures (the service has none anyway).
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from aisle.services.common.timing import app_ms
from bench.search_server import ServiceProcess

TENANTS = ("fashion", "homedepot")


def _setup(tmp: Path, data_dir: Path) -> dict[str, str]:
    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.demo import import_demo_catalogs, import_demo_query_log

    url = f"file://{tmp / 'bucket'}"
    tenants = Tenants(open_blob_store(url), ttl=0)
    import_demo_catalogs(tenants, tmp / "data", data_dir, only=TENANTS, echo=print)
    import_demo_query_log(tenants, data_dir, echo=print)
    return {"AISLE_STORAGE_URL": url, "AISLE_DATA_DIR": str(tmp / "data"), "AISLE_AUTH": "off"}


def _misspell(text: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(text) - 1)
    if rng.random() < 0.5:
        return text[:i] + text[i + 1] + text[i] + text[i + 2 :]
    return text[:i] + text[i + 1 :]


def prefixes(sources: list[str], n: int, seed: int = 11) -> list[str]:
    """``n`` distinct keystroke states: 1-12 leading characters of random sources, 20% misspelt."""
    rng = random.Random(seed)
    seen: dict[str, None] = {}
    while len(seen) < n:
        text = rng.choice(sources).strip()
        cut = text[: rng.randint(1, min(12, len(text)))]
        if len(cut) >= 4 and rng.random() < 0.2:
            cut = _misspell(cut, rng)
        if cut.strip():
            seen[cut] = None
    return list(seen)


def tenant_sources(data_dir: Path, tenant: str) -> list[str]:
    """What shoppers type: queries for homedepot, product names and brands for fashion."""
    import gzip

    import orjson

    if tenant == "homedepot":
        queries = (data_dir / "homedepot" / "queries_dev.txt").read_text().splitlines()
        return [q for q in queries if q.strip()]
    with gzip.open(data_dir / "fashion" / "products.jsonl.gz") as fh:
        rows = [orjson.loads(line) for line in fh if b"NaN" not in line]
    names = [str(r["name"]) for r in rows if r.get("name")]
    brands = [str(r["brand"]) for r in rows if r.get("brand")]
    return names + brands


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def latency(url: str, tenant: str, typed: list[str], rounds: int = 2) -> tuple[list[float], list[float]]:
    """Server-side (Server-Timing) and client-side milliseconds of every request."""
    server: list[float] = []
    client: list[float] = []
    with httpx.Client(base_url=url, timeout=30) as http:
        for q in typed[:100]:  # warm-up: code paths, allocator, connection
            http.get("/suggestions", params={"qStr": q, "tenant": tenant})
        for _ in range(rounds):
            for q in typed:
                start = time.perf_counter()
                resp = http.get("/suggestions", params={"qStr": q, "tenant": tenant})
                client.append((time.perf_counter() - start) * 1000)
                resp.raise_for_status()
                server.append(app_ms(resp.headers["server-timing"]))
    return server, client


def engine_cpu(env: dict[str, str], tenant: str, typed: list[str]) -> list[float]:
    """CPU milliseconds (``time.thread_time``) of the engine alone per prefix, in this process: what
    a request costs without HTTP and without time lost to other processes on a busy machine."""
    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.search.indexes import IndexRegistry
    from aisle.search.suggest.registry import SuggesterRegistry

    tenants = Tenants(open_blob_store(env["AISLE_STORAGE_URL"]))
    suggester = SuggesterRegistry(tenants, IndexRegistry(tenants, Path(env["AISLE_DATA_DIR"]))).get(tenant)
    cpu = []
    for q in typed:
        start = time.thread_time()
        suggester.suggest(q)
        cpu.append((time.thread_time() - start) * 1000)
    return cpu


def _first_request(url: str, tenant: str) -> float:
    start = time.perf_counter()
    httpx.get(url + "/suggestions", params={"qStr": "a", "tenant": tenant}, timeout=300).raise_for_status()
    return time.perf_counter() - start


def main(data_dir: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="aisle-bench-suggest-") as tmpdir:
        tmp = Path(tmpdir)
        env = _setup(tmp, data_dir)
        for cold in (True, False):  # a fresh process: first with an empty disk cache, then with it
            service = ServiceProcess("aisle.services.search.app", env, workers=1)
            try:
                service.wait_ready()
                before = service.rss_mb()
                for tenant in TENANTS:
                    took = _first_request(service.url, tenant)
                    state = "empty disk cache" if cold else "from the disk cache"
                    print(
                        f"{tenant}: first /suggestions (builds the suggestion index, {state}): {took:.1f} s"
                    )
                if not cold:
                    print(
                        f"search service RSS: {before:.0f} MiB with the search indexes, "
                        f"{service.rss_mb():.0f} MiB with both suggestion indexes too"
                    )
                if cold:
                    continue
                for tenant in TENANTS:
                    typed = prefixes(tenant_sources(data_dir, tenant), 1500)
                    server, client = latency(service.url, tenant, typed)
                    print(
                        f"{tenant} GET /suggestions, one worker, {len(server)} requests "
                        f"({len(typed)} distinct prefixes x 2): server-side p50 "
                        f"{statistics.median(server):.2f} ms, p99 {pct(server, 99):.2f} ms, max "
                        f"{max(server):.2f} ms; client-side p50 {statistics.median(client):.2f} ms, "
                        f"p99 {pct(client, 99):.2f} ms"
                    )
            finally:
                service.stop()
        for tenant in TENANTS:
            typed = prefixes(tenant_sources(data_dir, tenant), 1500)
            cpu = engine_cpu(env, tenant, typed)
            print(
                f"{tenant} suggestion engine alone, CPU time per prefix: "
                f"p50 {statistics.median(cpu):.2f} ms, "
                f"p99 {pct(cpu, 99):.2f} ms, max {max(cpu):.2f} ms"
            )
