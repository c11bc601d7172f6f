"""Analytics benchmark: each report over 10 million synthetic events (issue 28: under 1 s each here).

The log is synthetic (random shoppers, not the demo's judgments): 1,000,000 answers (80% searches over
20,000 queries drawn from a Zipf law, 20% recommendations of 8 containers, 10 products each, 3% with no
result) and 10,000,000 events over 28 days (60% views, 25% clicks, 8% add-to-cart, 7% purchases; 70%
carry the token of an answer to the same visitor). Files are written as the recorder writes them (one
Parquet file per batch of 100,000, per day), to a local bucket. The days are closed, so the first
report computes each day's roll-up (aisle.analytics.rollups; the analytics service does this in the
background): that time is printed on its own. Then each report is run three times; the figure is the
median wall time, DuckDB's own threads (2 cores) included.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from aisle.analytics.log import ParquetLog
from aisle.analytics.records import ANSWER_SCHEMA, OUTCOME_SCHEMA
from aisle.analytics.reports import AnalyticsReports
from aisle.core.analytics_layout import partition
from aisle.core.storage import open_blob_store

ANSWERS = 1_000_000
EVENTS = 10_000_000
DAYS = 28
VISITORS = 200_000
PRODUCTS = 50_000
QUERIES = 20_000
PER_ANSWER = 10
BATCH = 100_000


def _write(root: Path, table: str, frame: pa.Table, start: float) -> None:
    day_index = ((frame.column("ts").to_numpy() - start) // 86400).astype(np.int64)
    for d in range(DAYS):
        rows = frame.filter(pa.array(day_index == d))
        day = (datetime.fromtimestamp(start, UTC) + timedelta(days=d)).date()
        folder = root / partition("bench", table, day)
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(0, rows.num_rows, BATCH):
            pq.write_table(
                rows.slice(i, BATCH), folder / f"bench-{i // BATCH:08d}.parquet", compression="zstd"
            )


def build_log(root: Path, start: float) -> None:
    rng = np.random.default_rng(7)
    at = np.sort(rng.uniform(start, start + DAYS * 86400, ANSWERS))
    kind = np.where(rng.random(ANSWERS) < 0.8, "search", "recommendations")
    zipf = np.minimum(rng.zipf(1.07, ANSWERS), QUERIES)
    visitors = rng.integers(0, VISITORS, ANSWERS)
    products = rng.integers(0, PRODUCTS, (ANSWERS, PER_ANSWER))
    empty = rng.random(ANSWERS) < 0.03
    tokens = np.char.add("tok", np.arange(ANSWERS).astype(str))
    product_lists = [[] if e else [f"p{x}" for x in row] for e, row in zip(empty, products, strict=True)]
    answers = pa.table(
        {
            "token": tokens,
            "kind": kind,
            "ts": at,
            "visitor_id": np.char.add("v", visitors.astype(str)),
            "user_id": pa.nulls(ANSWERS, pa.string()),
            "query": np.where(kind == "search", np.char.add("query ", zipf.astype(str)), ""),
            "filters": np.full(ANSWERS, ""),
            "sort": np.full(ANSWERS, "relevance"),
            "product_ids": pa.array(product_lists, pa.list_(pa.string())),
            "total": np.where(empty, 0, 100),
            "stage": np.full(ANSWERS, "strict"),
            "rules": pa.array([["r1"] if z < 5 else [] for z in zipf], pa.list_(pa.string())),
            "container_id": np.where(kind == "search", "", np.char.add("c", (zipf % 8).astype(str))),
            "models": pa.array([[] for _ in range(ANSWERS)], pa.list_(pa.string())),
            "variant": np.full(ANSWERS, ""),
            "latency_ms": rng.gamma(2.0, 1.0, ANSWERS),
        },
        schema=ANSWER_SCHEMA,
    )
    _write(root, "answers", answers, start)
    del product_lists
    source = rng.integers(0, ANSWERS, EVENTS)
    kinds = rng.choice(["view", "click", "add_to_cart", "purchase"], EVENTS, p=[0.6, 0.25, 0.08, 0.07])
    position = rng.integers(1, PER_ANSWER + 1, EVENTS)
    tokened = rng.random(EVENTS) < 0.7
    outcomes = pa.table(
        {
            "event_id": np.char.add("e", np.arange(EVENTS).astype(str)),
            "event_type": kinds,
            "ts": np.minimum(at[source] + rng.exponential(300.0, EVENTS), start + DAYS * 86400 - 1),
            "visitor_id": np.char.add("v", visitors[source].astype(str)),
            "user_id": pa.nulls(EVENTS, pa.string()),
            "product_id": np.char.add("p", products[source, position - 1].astype(str)),
            "attribution_token": pa.array(np.where(tokened, tokens[source], None), pa.string()),
            "position": pa.array(np.where(tokened, position, 0), pa.int64()),
            "quantity": np.ones(EVENTS),
            "price": rng.gamma(2.0, 20.0, EVENTS),
        },
        schema=OUTCOME_SCHEMA,
    )
    _write(root, "outcomes", outcomes, start)


def recording_overhead(data_dir: Path) -> None:
    """Search latency with answers recorded and not: two search services on the same fashion tenant,
    one with ``AISLE_ANALYTICS=false``, measured in turns (A B B A A B B A, server-side
    ``Server-Timing``)."""
    from bench.bench_search import _setup, fashion_queries, latency, pct
    from bench.search_server import ServiceProcess

    if not (data_dir / "fashion").is_dir():
        print(f"recording overhead: skipped, {data_dir / 'fashion'} not found")
        return
    with tempfile.TemporaryDirectory() as tmp:
        env = _setup(Path(tmp), data_dir)
        queries = fashion_queries(data_dir, n=300)
        # as make run serves it: `aisle serve --only search`, AISLE_WORKERS (2) workers; auth off, as in
        # the other search benches (the token check is the same either way)
        on = ServiceProcess.as_served("search", {**env, "AISLE_ANALYTICS": "true"}, workers=2)
        off = ServiceProcess.as_served("search", {**env, "AISLE_ANALYTICS": "false"}, workers=2)
        try:
            on.wait_ready()
            off.wait_ready()
            times: dict[str, list[float]] = {"on": [], "off": []}
            turns = [("on", on), ("off", off)]
            for i in range(4):  # A B B A A B B A: neither goes first more often
                for name, service in turns if i % 2 == 0 else turns[::-1]:
                    times[name] += latency(service.url, queries, rounds=1)[0]
        finally:
            on.stop()
            off.stop()
        p50 = {k: pct(v, 50) for k, v in times.items()}
        p99 = {k: pct(v, 99) for k, v in times.items()}
        print(
            f"search with answers recorded vs not (fashion, 3 facets, server-side, {len(times['on'])} each):"
        )
        for name, figures in (("p50", p50), ("p99", p99)):
            ratio = figures["on"] / figures["off"]
            print(f"  {name} {figures['on']:.2f} ms recorded / {figures['off']:.2f} ms not = {ratio:.2f}x  "
                  "[goal: within 5%]")  # fmt: skip


def recording_cost() -> None:
    """In-process CPU per answer of issuing its token and recording it (on) or the token only (off),
    and the background flush's cost per record: the part of the overhead no other process blurs."""
    from fastapi import FastAPI

    from aisle.core.config import Settings
    from aisle.search.model import QueryGraph, SearchResult
    from aisle.search.query import SearchQuery
    from aisle.services.common.metrics import ServiceMetrics
    from aisle.services.common.outcomes import open_outcomes

    graph = QueryGraph(original="red nike shoes", normalized="red nike shoes", stage="strict")
    result = SearchResult(products=[{"id": str(i)} for i in range(20)], total=100, queryGraph=graph)
    query = SearchQuery("red nike shoes", size=20)
    with tempfile.TemporaryDirectory() as tmp:
        for on in (True, False):
            app = FastAPI()
            app.state.metrics = ServiceMetrics("bench")
            settings = Settings(storage_url=f"file://{tmp}/b", data_dir=Path(tmp) / "d", analytics=on,
                                analytics_flush_seconds=3600, analytics_buffer=50_000)  # fmt: skip
            outcomes = open_outcomes(app, "search", settings, open_blob_store(settings.storage_url))
            n = 9_000  # under the recorder's batch: no background write while timing
            began = time.perf_counter()
            for _ in range(n):
                outcomes.search_answer("fashion", "search", query, result)
            per = (time.perf_counter() - began) / n * 1e6
            began = time.perf_counter()
            written = outcomes.engine.recorder.flush() if outcomes.engine.recorder is not None else 0
            flush = (time.perf_counter() - began) / max(written, 1) * 1e6
            outcomes.close()
            print(f"in process, recording {'on' if on else 'off'}: {per:.1f} us per answer"
                  + (f", then {flush:.1f} us per record in the background flush" if on else ""))  # fmt: skip


def main(data_dir: Path) -> None:
    """Print the recording overhead and each report's median time over the synthetic log (never fails
    on speed)."""
    recording_cost()
    recording_overhead(data_dir)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "bucket"
        start = datetime(2026, 10, 1, tzinfo=UTC).timestamp()
        began = time.perf_counter()
        build_log(root, start)
        print(f"synthetic log: {ANSWERS:,} answers, {EVENTS:,} events over {DAYS} days, "
              f"written in {time.perf_counter() - began:.1f} s")  # fmt: skip
        reports = AnalyticsReports(ParquetLog(open_blob_store(f"file://{root}"), Path(tmp) / "cache"))
        end = start + DAYS * 86400
        began = time.perf_counter()
        reports.summary("bench", start, end)
        print(f"roll-ups of {DAYS} closed days computed (once, then kept in the bucket): "
              f"{time.perf_counter() - began:.1f} s")  # fmt: skip
        runs = {
            "summary": lambda: reports.summary("bench", start, end),
            "daily": lambda: reports.daily("bench", start, end),
            "searches (top 100)": lambda: reports.searches("bench", start, end),
            "searches/no-results": lambda: reports.no_result_queries("bench", start, end),
            "searches/no-clicks": lambda: reports.no_click_queries("bench", start, end),
            "positions": lambda: reports.positions("bench", start, end),
            "recommendations": lambda: reports.recommendations("bench", start, end),
            "rules": lambda: reports.rules("bench", start, end),
        }
        print(f"{'report':<22} {'median s':>9} {'goal':>6}")
        for name, run in runs.items():
            times = []
            for _ in range(3):
                t = time.perf_counter()
                run()
                times.append(time.perf_counter() - t)
            median = statistics.median(times)
            print(f"{name:<22} {median:>9.2f} {'met' if median < 1.0 else 'NOT met':>6}")
        print(f"check: summary {reports.summary('bench', start, end)}")
