"""The demo's A/B test: Home Depot's shipped learned ranker against no ranker, with simulated visitors.

Built in the background after the ranker (``aisle demo --heavy``, artifact ``experiment``). The
experiment is stored like any other, with ``simulated: true``: control is the live setting (the ranker
in use), variant ``no-ranker`` switches reranking off. Its two weeks end with the simulated analytics
month (yesterday), so every figure of those days is labelled simulated. Each simulated visitor makes
``1 + Poisson(1.5)`` searches, queries drawn from the dev queries by the Zipf law of
:mod:`aisle.demo.traffic`; each search is answered by the demo's own search engine *with the visitor's
variant applied* (:class:`~aisle.search.experiments.SearchArms` over the experiment as it ran), and
the shopper's clicks and purchases come from the relevance judgments through the same click model as
the analytics month (:func:`aisle.demo.traffic.shopper_events`). The click model's parameters go to
nothing that learns. The experiment is written stopped, after its log: an interrupted run leaves no
experiment, and the next run removes its files and starts again. Its searches are in the tenant's
analytics log too, so the log is marked simulated by this source with its own period (the Analytics
page's banner names it beside the demo's month), also for a demo built before sources were named.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np

from aisle.analytics.engine import AnalyticsEngine, SimulatedPeriod
from aisle.analytics.log import ParquetLog
from aisle.analytics.records import Answer, Record, new_attribution_token
from aisle.core.config import Settings
from aisle.core.errors import AisleError
from aisle.core.tenancy import Tenants
from aisle.demo.traffic import ClickModel, Shown, shopper_events
from aisle.demo.traffic_build import clear_writer, write_batches
from aisle.experiments.admin import ExperimentAdmin
from aisle.experiments.model import Experiment, ExperimentBody
from aisle.search.engine import SearchEngine
from aisle.search.experiment_promotion import SearchPromotion
from aisle.search.experiments import SearchArms
from aisle.search.query import SearchQuery
from aisle.search.ranking.store import RankerStore

TENANT = "homedepot"
WRITER = "demo-experiment"
NAME = "Learned ranker vs no ranker (simulated)"
SOURCE = f"A/B test “{NAME}”"
"""The experiment's name as a simulated source of the analytics log."""
NOTE = (
    "simulated visitors of the A/B test, each assigned a variant and searching 1 + Poisson(1.5) times; "
    "clicks and purchases drawn from the relevance judgments through the demo's click model"
)
Progress = Callable[[str, int, int], None]
Search = Callable[[str, str], tuple[Shown, str]]
"""``(query, visitor) -> (what was shown, the answer's variant tags)``."""


@dataclass(frozen=True)
class ExperimentTraffic:
    """The simulated visitors: how many, their mean extra searches, the period, the seed."""

    last_day: date
    days: int = 14
    visitors: int = 60_000
    extra_searches: float = 1.5
    zipf_s: float = 1.07
    seed: int = 29

    def period(self) -> tuple[float, float]:
        first = self.last_day - timedelta(days=self.days - 1)
        start = datetime(first.year, first.month, first.day, tzinfo=UTC).timestamp()
        return start, start + self.days * 86400.0


def demo_body(ranker_version: int) -> ExperimentBody:
    """The demo experiment: the live ranker (control) against no ranker."""
    return ExperimentBody.model_validate(
        {
            "name": NAME,
            "description": f"Does the learned ranker (v{ranker_version}) earn more than BM25 with hybrid "
            "retrieval alone? Simulated shoppers: clicks and purchases drawn from the relevance "
            "judgments by a click model.",
            "primaryMetric": "clickThroughRate",
            "variants": [
                {
                    "id": "control",
                    "name": f"Learned ranker v{ranker_version} (live)",
                    "changes": {"ranker": ranker_version},
                },
                {"id": "no-ranker", "name": "No learned ranker", "changes": {"ranker": "none"}},
            ],
        }
    )


def simulate_visitors(
    tenant: str,
    queries: Sequence[str],
    judgments: dict[str, dict[str, float]],
    search: Search,
    price: Callable[[str], float],
    traffic: ExperimentTraffic,
    model: ClickModel | None = None,
) -> Iterator[Record]:
    """Answers (tagged with the variants ``search`` served) and the visitors' clicks and purchases."""
    model = model or ClickModel()
    rng = np.random.default_rng(traffic.seed)
    order = list(queries)
    rng.shuffle(order)
    weights = 1.0 / np.arange(1, len(order) + 1) ** traffic.zipf_s
    weights /= weights.sum()
    start, end = traffic.period()
    for n in range(traffic.visitors):
        visitor = f"exp-sim-{n:06d}"
        count = 1 + int(rng.poisson(traffic.extra_searches))
        times = np.sort(rng.uniform(start, end - 3600, count))
        for at, pick in zip(times, rng.choice(len(order), size=count, p=weights), strict=True):
            text = order[pick]
            shown, tags = search(text, visitor)
            token = new_attribution_token()
            yield Answer(
                tenant,
                token,
                "search",
                float(at),
                shown.product_ids,
                shown.total,
                query=shown.query,
                stage=shown.stage,
                rules=shown.rules,
                sort="relevance",
                variant=tags,
                visitor_id=visitor,
            )
            yield from shopper_events(
                tenant, token, visitor, float(at), shown, judgments.get(text, {}), price, model, rng
            )


class _Fixed:
    """The experiment as it ran, for the simulation's engine only (never in the bucket as running)."""

    def __init__(self, experiment: Experiment) -> None:
        self.experiment = experiment

    def running(self, tenant: str) -> tuple[Experiment, ...]:
        return (self.experiment,)


def _engine_search(settings: Settings, tenants: Tenants, running: Experiment) -> Search:
    engine = SearchEngine.from_settings(settings, tenants.store, tenants=tenants)
    engine.arms = SearchArms(_Fixed(running), engine.rules)
    cache: dict[tuple[str, str], tuple[Shown, str]] = {}

    def search(text: str, visitor: str) -> tuple[Shown, str]:
        variant = engine.arms.variants(TENANT, visitor)[0][1].id if engine.arms else ""
        hit = cache.get((text, variant))
        if hit is None:
            result = engine.search(TENANT, SearchQuery(text=text, size=20, visitor_id=visitor))
            graph = result.query_graph
            tags = ",".join(f"{e.experimentId}:{e.variantId}" for e in graph.experiments)
            shown = Shown(
                tuple(str(p["id"]) for p in result.products),
                result.total,
                graph.normalized,
                graph.stage,
                tuple(str(r["id"]) for r in graph.rules),
            )
            hit = cache[(text, variant)] = (shown, tags)
        return hit

    return search


def mark_experiment_simulated(analytics: AnalyticsEngine, started: datetime, stopped: datetime) -> None:
    """Mark the days from ``started`` to ``stopped`` (excluded) of the tenant's log as the experiment's
    simulated visitors (:data:`SOURCE`), unless they are marked so already."""
    period = SimulatedPeriod(started.date(), (stopped - timedelta(seconds=1)).date(), NOTE, SOURCE)
    if period not in analytics.simulated_sources(TENANT):
        analytics.mark_simulated(TENANT, period)


def build_demo_experiment(
    settings: Settings,
    tenants: Tenants,
    data: Path,
    progress: Progress,
    *,
    traffic: ExperimentTraffic | None = None,
) -> str:
    """Create the demo experiment with its simulated visitors unless it exists; returns what was done.

    Raises:
        AisleError: the tenant has no ranker in use (build the ranker first).
    """
    from aisle.demo.traffic_build import read_judgments, stand_in_price

    rankers = RankerStore(tenants.store, check_every=0)
    admin = ExperimentAdmin(tenants, [SearchPromotion(tenants, rankers)])
    store = admin.store(TENANT)
    analytics = AnalyticsEngine.from_settings(settings, tenants.store, record=False)
    for earlier in store.list():
        if earlier.simulated and earlier.status != "draft":
            if earlier.startedAt is not None and earlier.stoppedAt is not None:  # a demo built before
                mark_experiment_simulated(analytics, earlier.startedAt, earlier.stoppedAt)
            return "already simulated"
        if earlier.simulated:  # an interrupted run's draft: its log files are removed below too
            store.delete(earlier.id)
    version = rankers.in_use(TENANT)
    if version is None:
        raise AisleError(
            f"tenant '{TENANT}' has no learned ranker in use: the experiment compares it with none"
        )
    traffic = traffic or ExperimentTraffic(last_day=datetime.now(UTC).date() - timedelta(days=1))
    start, end = traffic.period()
    draft = admin.create(TENANT, demo_body(version), simulated=True)
    running = draft.model_copy(update={"status": "running"})
    log = ParquetLog(analytics.log.store, analytics.log.cache_dir, writer=WRITER)
    clear_writer(log, TENANT, WRITER)
    folder = data / TENANT
    queries = [q.strip() for q in (folder / "queries_dev.txt").read_text().splitlines() if q.strip()]
    records = simulate_visitors(
        TENANT,
        queries,
        read_judgments(folder / "judgments_dev.csv"),
        _engine_search(settings, tenants, running),
        stand_in_price,
        traffic,
    )
    written = write_batches(log, records, progress, "experiment")
    begin = datetime.fromtimestamp(start, UTC)
    mark_experiment_simulated(analytics, begin, datetime.fromtimestamp(end, UTC))
    store.transition(draft.id, "started", "running", ("draft",), at=begin)
    store.transition(draft.id, "stopped", "stopped", ("running",), at=datetime.fromtimestamp(end, UTC))
    return f"{traffic.visitors} simulated visitors, {written} records, {begin.date()} to {traffic.last_day}"
