"""Search benchmarks: import+index time, service memory, server-side latency, throughput, NDCG@10.

Figures printed (issue "Foundation and the search service"):
- importing and indexing the 44,441 fashion products (s);
- resident memory of one search worker with all demo tenants loaded (MiB);
- server-side latency (Server-Timing header) on fashion with three facets, one worker: p50/p99 (ms);
- throughput with 2 workers and 32 concurrent clients (queries/s; wrk when installed, else httpx);
- NDCG@10 on the Home Depot dev judgments through the running service.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
import orjson

from aisle.services.common.timing import app_ms
from bench.search_server import ServiceProcess

FACETS = ["brand", "color", "price"]


def _setup(tmp: Path, data_dir: Path) -> dict[str, str]:
    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.demo import import_demo_catalogs

    url = f"file://{tmp / 'bucket'}"
    tenants = Tenants(open_blob_store(url), ttl=0)
    import_demo_catalogs(
        tenants, tmp / "data", data_dir, only=("fashion", "homedepot", "default"), echo=print
    )
    return {"AISLE_STORAGE_URL": url, "AISLE_DATA_DIR": str(tmp / "data"), "AISLE_AUTH": "off"}


def fashion_queries(data_dir: Path, n: int = 400, seed: int = 7) -> list[str]:
    """Realistic queries: colour/brand/type combinations and title prefixes from the catalog."""
    import gzip

    rng = random.Random(seed)
    with gzip.open(data_dir / "fashion" / "products.jsonl.gz") as fh:
        rows = [orjson.loads(line) for line in fh if b"NaN" not in line]
    queries = []
    for row in rng.sample(rows, n):
        kind = rng.random()
        if kind < 0.4:
            queries.append(f"{row['colour'] or ''} {row['article_type']}".strip().lower())
        elif kind < 0.7:
            queries.append(f"{row['brand']} {row['article_type']}".lower())
        else:
            queries.append(" ".join(row["name"].split()[:3]).lower())
    return queries


def latency(url: str, queries: list[str], rounds: int = 3) -> tuple[list[float], list[float]]:
    server, client = [], []
    with httpx.Client(base_url=url, timeout=10) as http:
        for q in queries[:50]:  # warm-up
            http.post("/search", json={"query": q, "tenant": "fashion", "facets": FACETS})
        for _ in range(rounds):
            for q in queries:
                t = time.perf_counter()
                resp = http.post("/search", json={"query": q, "tenant": "fashion", "facets": FACETS})
                client.append((time.perf_counter() - t) * 1000)
                resp.raise_for_status()
                server.append(app_ms(resp.headers["server-timing"]))
    return server, client


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


async def _throughput_httpx(url: str, queries: list[str], clients: int, seconds: float) -> float:
    done = 0
    stop = time.perf_counter() + seconds
    async with httpx.AsyncClient(
        base_url=url, timeout=10, limits=httpx.Limits(max_connections=clients)
    ) as http:

        async def worker(i: int) -> None:
            nonlocal done
            j = i
            while time.perf_counter() < stop:
                q = queries[j % len(queries)]
                j += clients
                r = await http.post("/search", json={"query": q, "tenant": "fashion", "facets": FACETS})
                r.raise_for_status()
                done += 1

        start = time.perf_counter()
        await asyncio.gather(*(worker(i) for i in range(clients)))
        return done / (time.perf_counter() - start)


def throughput_wrk(url: str, queries: list[str], clients: int, seconds: int) -> float | None:
    if shutil.which("wrk") is None:
        return None
    bodies = [orjson.dumps({"query": q, "tenant": "fashion", "facets": FACETS}).decode() for q in queries]
    lua = (
        "local bodies = {"
        + ",".join(f"[[{b}]]" for b in bodies)
        + "}\n"
        + (
            "local i = 0\nrequest = function()\n  i = i + 1\n"
            '  local headers = {["Content-Type"]="application/json"}\n'
            '  return wrk.format("POST", "/search", headers, bodies[(i % #bodies) + 1])\n'
            "end\n"
        )
    )
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as fh:
        fh.write(lua)
    out = subprocess.run(
        ["wrk", "-t", "1", "-c", str(clients), "-d", f"{seconds}s", "-s", fh.name, url],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    for line in out.splitlines():
        if line.startswith("Requests/sec:"):
            return float(line.split()[1])
    return None


def main(data_dir: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="aisle-bench-") as tmpdir:
        tmp = Path(tmpdir)
        env = _setup(tmp, data_dir)
        queries = fashion_queries(data_dir)

        one = ServiceProcess("aisle.services.search.app", env, workers=1)
        try:
            one.wait_ready()
            print(f"search service RSS, one worker, all demo tenants loaded: {one.rss_mb():.0f} MiB")
            server, client = latency(one.url, queries)
            print(
                f"fashion search, 3 facets, one worker, {len(server)} requests: server-side p50 "
                f"{statistics.median(server):.2f} ms, p99 {pct(server, 99):.2f} ms; client-side p50 "
                f"{statistics.median(client):.2f} ms, p99 {pct(client, 99):.2f} ms"
            )
            from aisle.search.evaluation import evaluate_over_http, load_judgments

            judgments = data_dir / "homedepot" / "judgments_dev.csv"
            if judgments.exists():
                report = evaluate_over_http(one.url, "homedepot", load_judgments(judgments))
                print(
                    f"Home Depot dev NDCG@10 via the service: {report.ndcg10:.4f} ({report.queries} queries)"
                )
        finally:
            one.stop()

        two = ServiceProcess("aisle.services.search.app", env, workers=2)
        try:
            two.wait_ready()
            time.sleep(3)  # both workers loaded
            rate = throughput_wrk(two.url, queries, 32, 15)
            tool = "wrk"
            if rate is None:
                rate = asyncio.run(_throughput_httpx(two.url, queries, 32, 15.0))
                tool = "httpx (Python client on the same cores)"
            print(f"throughput, 2 workers, 32 concurrent clients ({tool}): {rate:.0f} queries/s")
        finally:
            two.stop()
