"""SIMULATED shoppers for the click-learning benches: Home Depot searches served in process by the search
engine, recorded by the services' own recording code, with an exploration experiment half-way.

Shared by ``bench_click_learning`` (NDCG of rankers trained from the log) and ``bench_behaviour_served``
(the same traffic, then the real services train and serve a ranker over HTTP). The shoppers' click model
lives in :mod:`aisle.demo.traffic`; nothing here hands its parameters to a learner.

The loop (:func:`simulate`): the first half of the searches is served without a ranker. Then the
behaviour job's refresh runs, ``explore`` trains and saves a click ranker from that half (not deployed),
and, past :data:`EXPLORE_AFTER`, an A/B experiment is started in the bucket: control (the live setting:
no ranker) against ``explore`` (that ranker version), 50/50 by visitor. The second half is served through
the platform's experiment assignment (:class:`~aisle.search.experiments.SearchArms` over
:class:`~aisle.experiments.store.LiveExperiments`), so each logged answer carries its ``variant`` and
the same (query, product) pairs appear at different positions in the two arms: the interventions the
position-bias estimate harvests (:mod:`aisle.behaviour.propensity`). The experiment is stopped at the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

TENANT = "homedepot"
EXPLORE_AFTER = (50_000, 5_000)
"""Searches and clicks after which the mid-run ranker is explored as an experiment variant (the
platform's own gate for putting a click ranker in use is ``aisle.search.training.clicks.MIN_SEARCHES``,
far higher)."""
EXPLORE_NAME = "Exploration: click ranker (SIMULATED shoppers)"
Explore = Callable[[Any], int | None]
"""``(the behaviour record refreshed after the first half) -> a saved, not deployed ranker version``
(None: nothing to explore)."""


class Shoppers:
    """The Home Depot catalog and index under ``work`` (bucket and data dir), the dev queries the
    simulated shoppers search and the dev judgments their clicks are drawn from."""

    def __init__(self, data_dir: Path, work: Path) -> None:
        from aisle.core.storage import open_blob_store
        from aisle.core.tenancy import Tenants
        from aisle.demo import import_demo_catalogs
        from aisle.search.evaluation import load_judgments
        from aisle.search.indexes import IndexRegistry

        self.work = work
        self.tenants = Tenants(open_blob_store(f"file://{work / 'bucket'}"), ttl=3600)
        import_demo_catalogs(
            self.tenants, work / "data", data_dir, only=(TENANT,), if_missing=True, echo=print
        )
        self.indexes = IndexRegistry(self.tenants, work / "data")
        self.index = self.indexes.get(TENANT)
        self.config = self.tenants.config(TENANT)
        self.ids = self.index.product_ids()
        self.dev = load_judgments(data_dir / "homedepot" / "judgments_dev.csv")  # the shoppers' minds
        queries = (data_dir / "homedepot" / "queries_dev.txt").read_text().splitlines()
        self.queries = [q.strip() for q in queries if q.strip()]
        self.norm: dict[str, str] = {}  # raw query -> the normalised query the log records


def start_exploration(store: Any, tenants: Any, rankers: Any, version: int) -> str:
    """Store and start the exploration experiment (control: the live setting; ``explore``: ranker
    ``version``) in ``store``'s tenant scope, checked like any experiment; returns its id."""
    from aisle.core.tenancy import tenant_scope
    from aisle.experiments.admin import ExperimentAdmin
    from aisle.experiments.model import ExperimentBody
    from aisle.experiments.store import ExperimentStore
    from aisle.search.experiment_promotion import SearchPromotion

    body = ExperimentBody.model_validate(
        {
            "name": EXPLORE_NAME,
            "description": "Serves a click ranker trained below the deployment threshold to half the "
            "visitors, so the log shows pairs at other positions (position-bias estimation).",
            "primaryMetric": "clickThroughRate",
            "variants": [
                {"id": "control", "name": "Live setting"},
                {"id": "explore", "name": f"Click ranker v{version}", "changes": {"ranker": version}},
            ],
        }
    )
    ExperimentAdmin(tenants, [SearchPromotion(tenants, rankers)]).check(TENANT, body)
    experiments = ExperimentStore(tenant_scope(store, TENANT))
    draft = experiments.create(body, simulated=True)
    experiments.transition(draft.id, "started", "running", ("draft",))
    return draft.id


def stop_exploration(store: Any, experiment_id: str) -> None:
    from aisle.core.tenancy import tenant_scope
    from aisle.experiments.store import ExperimentStore

    ExperimentStore(tenant_scope(store, TENANT)).transition(experiment_id, "stopped", "stopped", ("running",))


class _Served:
    """The in-process serving and recording of one run's bucket (see :func:`simulate`)."""

    def __init__(self, world: Shoppers, run: Path, capacity: int, writer: str) -> None:
        from prometheus_client import CollectorRegistry, Counter

        from aisle.analytics.engine import AnalyticsEngine
        from aisle.analytics.log import ParquetLog
        from aisle.analytics.recorder import Recorder
        from aisle.core.storage import open_blob_store
        from aisle.demo.traffic import ClickModel
        from aisle.experiments.store import LiveExperiments
        from aisle.search.engine import SearchEngine
        from aisle.search.experiments import SearchArms
        from aisle.search.ranking.store import RankerStore
        from aisle.services.common.outcomes import Outcomes
        from aisle.vectors.search import VectorSearch
        from aisle.vectors.store import VectorStore

        self.world = world
        self.store = open_blob_store(f"file://{run / 'bucket'}")
        self.parquet = ParquetLog(self.store, run / "cache", writer=writer)
        self.recorder = Recorder(self.parquet, flush_s=3600, capacity=capacity, batch=200_000, start=False)
        counter = Counter("records", "bench", registry=CollectorRegistry())
        self.outcomes = Outcomes(AnalyticsEngine(self.store, self.parquet, self.recorder), counter)
        self.rankers = RankerStore(self.store, check_every=0)
        self.arms = SearchArms(LiveExperiments(self.store, verify_every=3600))
        self.engine = SearchEngine(
            world.tenants,
            world.indexes,
            VectorSearch(VectorStore(world.work / "data")),
            rankers=self.rankers,
            arms=self.arms,
        )
        self.model = ClickModel(eta=1.0, depth=10)

    def serve(
        self,
        texts: list[str],
        visitors: np.ndarray,
        rng: np.random.Generator,
        in_experiments: bool,
        echo: Callable[[str], None],
        counted: int = 0,
    ) -> tuple[int, dict[str, int]]:
        """Serve ``texts[i]`` to visitor ``sim-<visitors[i]>`` (through the running experiments' arms
        when ``in_experiments``), draw and record the shoppers' clicks and purchases; a query's page is
        searched once per arm. Returns (clicks, answers per variant tag)."""
        from aisle.analytics.records import Outcome
        from aisle.search.query import SearchQuery

        world, model = self.world, self.model
        pages: dict[tuple[str, str], tuple[Any, list[float]]] = {}
        variant_of: dict[str, str] = {}
        per_variant: dict[str, int] = {}
        clicks = 0
        start = time.perf_counter()
        for done, (text, visitor_n) in enumerate(zip(texts, visitors, strict=True)):
            visitor = f"sim-{visitor_n}"
            variant = variant_of.get(visitor)
            if variant is None:
                chosen = self.arms.variants(TENANT, visitor) if in_experiments else []
                variant = variant_of[visitor] = ",".join(f"{e.id}:{v.id}" for e, v in chosen)
            query = SearchQuery(text, size=10, visitor_id=visitor)
            page = pages.get((text, variant))
            if page is None:
                result = self.engine.search(TENANT, query)
                judged = world.dev.get(text, {})
                p = [
                    model.click_probability(k, judged.get(str(x["id"]), 1.0))
                    for k, x in enumerate(result.products, 1)
                ]
                page = pages[(text, variant)] = (result, p)
                world.norm[text] = result.query_graph.normalized
            result, p = page
            per_variant[variant] = per_variant.get(variant, 0) + 1
            token = self.outcomes.search_answer(TENANT, "search", query, result)
            at = time.time()
            for k in np.flatnonzero(rng.random(len(p)) < np.asarray(p)).tolist():
                product = str(result.products[k]["id"])
                clicks += 1
                click = Outcome(TENANT, f"{token}-c{k}", "click", at + 5, visitor, product, token, k + 1)
                self.outcomes.record(click)
                if rng.random() < model.conversion_probability(world.dev.get(text, {}).get(product, 1.0)):
                    self.outcomes.record(
                        Outcome(
                            TENANT, f"{token}-p{k}", "purchase", at + 60, visitor, product, token,
                            quantity=1.0, price=10.0,
                        )
                    )  # fmt: skip
            if (done + 1) % 100_000 == 0:
                took = time.perf_counter() - start
                echo(f"  {counted + done + 1} searches, {clicks} clicks, {took:.0f} s")
        self.recorder.flush()
        return clicks, per_variant


def _queries(world: Shoppers, n: int, rng: np.random.Generator) -> list[str]:
    """``n`` dev queries drawn by the Zipf law (exponent 1.07) over a shuffle of them."""
    order = list(world.queries)
    rng.shuffle(order)
    weights = 1.0 / np.arange(1, len(order) + 1) ** 1.07
    return [order[i] for i in rng.choice(len(order), size=n, p=weights / weights.sum())]


def simulate(
    world: Shoppers, run: Path, n: int, explore: Explore, seed: int = 7, echo: Callable[[str], None] = print
) -> dict[str, object]:
    """Serve ``n`` simulated searches in two halves (see module docstring) into ``run``'s bucket; returns
    the log's figures: searches, clicks, ``v1`` (what the exploration did) and per-variant searches."""
    from aisle.behaviour.store import refresh

    served = _Served(world, run, capacity=2 * n * 12 + 10, writer="bench")
    rng = np.random.default_rng(seed)
    texts = _queries(world, n, rng)
    visitors = rng.integers(0, 20_000, n)
    figures: dict[str, object] = {"searches": n}
    clicks = 0
    experiment = None
    per_variant: dict[str, int] = {}
    for phase in (0, 1):
        if phase == 1:
            record = refresh(served.parquet, TENANT)
            enough = record.searches >= EXPLORE_AFTER[0] and record.clicks >= EXPLORE_AFTER[1]
            version = explore(record) if enough else None
            if version is None:
                figures["v1"] = f"none ({record.searches} searches, {record.clicks} clicks: under the bar)"
            else:
                experiment = start_exploration(served.store, world.tenants, served.rankers, version)
                figures["v1"] = (
                    f"v{version} explored as experiment {experiment} (50/50 by visitor) after "
                    f"{record.searches} searches, {record.clicks} clicks"
                )
            figures["explore_version"] = version if experiment else None
            echo(f"mid-run: {figures['v1']}")
        half = slice(phase * n // 2, (phase + 1) * n // 2)
        got, variants = served.serve(
            texts[half], visitors[half], rng, experiment is not None, echo, counted=phase * n // 2
        )
        clicks += got
        for tag, count in variants.items():
            per_variant[tag] = per_variant.get(tag, 0) + count
    if experiment is not None:
        stop_exploration(served.store, experiment)
    figures["clicks"] = clicks
    figures["variants"] = per_variant
    return figures


def simulate_trial(
    world: Shoppers,
    run: Path,
    n: int,
    seed: int = 17,
    visitors: int = 40_000,
    echo: Callable[[str], None] = print,
) -> dict[str, object]:
    """Serve ``n`` more simulated searches by ``visitors`` new visitors through the tenant's running
    experiments (a ranker trial the train_ranker job started), recorded like the rest of the log.
    Returns the searches, clicks and answers per variant tag."""
    served = _Served(world, run, capacity=n * 12 + 10, writer="bench-trial")
    rng = np.random.default_rng(seed)
    texts = _queries(world, n, rng)
    who = rng.integers(0, visitors, n) + 1_000_000  # not the first visitors: a fresh assignment
    clicks, per_variant = served.serve(texts, who, rng, True, echo)
    return {"searches": n, "clicks": clicks, "variants": per_variant}
