"""Fill the demo's analytics: a simulated month of Home Depot searches and replayed YooChoose sessions.

Runs in the background builder (``aisle demo --heavy``, artifact ``traffic``), once per demo: the log is
written through :class:`~aisle.analytics.log.ParquetLog` straight to the bucket, then each tenant is
marked simulated (:meth:`~aisle.analytics.engine.AnalyticsEngine.mark_simulated`), which the reports and
the console show. The month ends the day before the build, so live traffic of the day stands apart.

- ``homedepot``: :func:`aisle.demo.traffic.simulate_searches` over the dev queries and judgments, each
  query searched by the demo's own search engine (rules, hybrid and ranker as they are at build time).
  The catalog has no prices, so purchases carry a stand-in price (a log-normal draw fixed per product,
  median 30): revenue figures of this tenant are simulated too.
- ``yoochoose``: :func:`aisle.demo.traffic.replay_sessions` over the test sessions of the YooChoose
  sample, each view answered by the ``also-viewed`` container through the predict engine.
"""

from __future__ import annotations

import csv
import hashlib
import math
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from statistics import NormalDist

from aisle.analytics.engine import DEMO_TRAFFIC, AnalyticsEngine, SimulatedPeriod
from aisle.analytics.log import ParquetLog
from aisle.analytics.records import Record
from aisle.core import analytics_layout as layout
from aisle.core.config import Settings
from aisle.core.events import open_event_store
from aisle.core.tenancy import Tenants
from aisle.demo.traffic import Shown, Traffic, replay_sessions, simulate_searches
from aisle.recs.serving import PredictEngine, PredictQuery, RegistryModelSource
from aisle.search.engine import SearchEngine
from aisle.search.query import SearchQuery

SEARCH_TENANT = "homedepot"
RECS_TENANT, RECS_CONTAINER = "yoochoose", "also-viewed"
SESSIONS = 1500
BATCH = 20_000
WRITER = "demo-traffic"
"""The name in the simulated files' names, so an interrupted run's files can be told apart and removed."""
SEARCH_NOTE = (
    "simulated shoppers: Home Depot dev queries repeated by a Zipf law, each searched by Aisle; clicks "
    "drawn from the relevance judgments through a position-based click model; purchases from a share of "
    "clicks, at stand-in prices (the catalog has none)"
)
RECS_NOTE = (
    "replayed sessions: YooChoose test sessions, each view answered by the also-viewed container; a click "
    "is the shopper's real next item when the answer showed it (no purchases in this data)"
)
Progress = Callable[[str, int, int], None]


def stand_in_price(product_id: str) -> float:
    """A price fixed per product for a catalog without prices: log-normal, median 30, from a hash."""
    digest = hashlib.blake2b(product_id.encode(), digest_size=8).digest()
    u = (int.from_bytes(digest, "big") + 0.5) / 2**64
    return round(30.0 * math.exp(0.8 * NormalDist().inv_cdf(u)), 2)


def clear_writer(log: ParquetLog, tenant: str, writer: str) -> int:
    """Delete the log files ``writer`` wrote for ``tenant`` (an interrupted earlier run), so a retry counts
    once. Returns how many files were deleted."""
    gone = 0
    for table in ("answers", "outcomes"):
        for day in log.days(tenant, table):
            for path in list(log.store.list(layout.partition(tenant, table, day))):
                if path.rsplit("/", 1)[-1].startswith(f"{writer}-"):
                    log.store.delete(path)
                    gone += 1
    return gone


def write_batches(log: ParquetLog, records: Iterable[Record], progress: Progress, what: str) -> int:
    """Write ``records`` to ``log`` in files of :data:`BATCH` records, reporting progress. Returns the
    number written."""
    batch: list[Record] = []
    written = 0
    for record in records:
        batch.append(record)
        if len(batch) >= BATCH:
            log.write(batch)
            written += len(batch)
            batch = []
            progress(f"{what}: {written} records", written, written + BATCH)
    if batch:
        log.write(batch)
        written += len(batch)
    return written


def read_judgments(path: Path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            out.setdefault(row["query"], {})[row["product_id"]] = float(row["relevance"])
    return out


def _search_traffic(settings: Settings, tenants: Tenants, data: Path, traffic: Traffic) -> Iterable[Record]:
    engine = SearchEngine.from_settings(settings, tenants.store)
    folder = data / "homedepot"
    queries = [q.strip() for q in (folder / "queries_dev.txt").read_text().splitlines() if q.strip()]

    def search(text: str) -> Shown:
        result = engine.search(SEARCH_TENANT, SearchQuery(text=text, size=20))
        graph = result.query_graph
        return Shown(
            tuple(str(p["id"]) for p in result.products),
            result.total,
            graph.normalized,
            graph.stage,
            tuple(str(r["id"]) for r in graph.rules),
        )

    judged = read_judgments(folder / "judgments_dev.csv")
    return simulate_searches(SEARCH_TENANT, queries, judged, search, stand_in_price, traffic)


def _sessions(path: Path, limit: int) -> list[list[str]]:
    sessions: dict[str, list[str]] = {}
    with path.open() as f:
        next(f, None)  # header
        for line in f:
            session, item, _time = line.rstrip("\n").split("\t")[:3]
            sessions.setdefault(session, []).append(item)
    return [s for s in sessions.values() if len(s) >= 2][:limit]


def _recs_traffic(settings: Settings, tenants: Tenants, data: Path, traffic: Traffic) -> Iterable[Record]:
    events = open_event_store(settings)
    engine = PredictEngine(tenants, events, RegistryModelSource())
    sessions = _sessions(next((data / "yoochoose").glob("*_test.txt")), SESSIONS)

    def recommend(seed: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        try:
            out = engine.recommend(RECS_TENANT, PredictQuery(container_id=RECS_CONTAINER, seeds=[seed]))
        except Exception:  # a seed the model does not know answers nothing: the session goes on
            return (), ()
        return tuple(i.id for i in out.items), tuple(out.models)

    return replay_sessions(RECS_TENANT, RECS_CONTAINER, sessions, recommend, lambda _p: 0.0, traffic)


TENANTS = {SEARCH_TENANT: (_search_traffic, SEARCH_NOTE), RECS_TENANT: (_recs_traffic, RECS_NOTE)}


def build_demo_traffic(
    settings: Settings,
    tenants: Tenants,
    tenant: str,
    data: Path,
    progress: Progress,
    *,
    traffic: Traffic | None = None,
) -> str:
    """Write ``tenant``'s simulated month (``traffic``: by default 28 days ending yesterday) unless it
    has one; returns what was done.

    Raises:
        KeyError: ``tenant`` is not a demo tenant with traffic (:data:`TENANTS`).
        What the engines raise: a missing catalog or model, the bucket unavailable. A run stopped half-way
        leaves no count behind: the next one removes its files before writing (:data:`WRITER`).
    """
    make, note = TENANTS[tenant]
    traffic = traffic or Traffic(last_day=datetime.now(UTC).date() - timedelta(days=1))
    analytics = AnalyticsEngine.from_settings(settings, tenants.store, record=False)
    if any(p.source == DEMO_TRAFFIC for p in analytics.simulated_sources(tenant)):
        return "already simulated"
    log = ParquetLog(analytics.log.store, analytics.log.cache_dir, writer=WRITER)
    clear_writer(log, tenant, WRITER)
    written = write_batches(log, make(settings, tenants, data, traffic), progress, tenant)
    first = traffic.last_day - timedelta(days=traffic.days - 1)
    analytics.mark_simulated(tenant, SimulatedPeriod(first, traffic.last_day, note))
    return f"{written} simulated records, {first} to {traffic.last_day}"
