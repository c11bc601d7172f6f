"""The demo's A/B test: simulated visitors answered by the engine with their variant applied, a finished
experiment the results endpoint reads, and a second build that leaves it alone."""

from __future__ import annotations

import shutil
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import lightgbm
import numpy as np
import pytest

from aisle.analytics.engine import AnalyticsEngine
from aisle.analytics.records import Answer, Outcome
from aisle.core.config import Settings
from aisle.core.errors import AisleError
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.demo.experiment import SOURCE, ExperimentTraffic, build_demo_experiment, simulate_visitors
from aisle.demo.traffic import Shown
from aisle.experiments.store import ExperimentStore
from aisle.search.ranking.features import FEATURES
from aisle.search.ranking.store import RankerRecord, RankerStore

PRODUCTS = tuple(f"p{i}" for i in range(20))


def test_simulated_visitors_keep_their_variant_and_a_better_order_earns_more_clicks() -> None:
    def search(text: str, visitor: str) -> tuple[Shown, str]:
        good = int(visitor[-1]) % 2 == 0  # stands in for the assignment: by visitor, stable
        shown = PRODUCTS if good else tuple(reversed(PRODUCTS))
        return Shown(shown, 20, text, "strict", ()), f"e1:{'good' if good else 'bad'}"

    judged = {q: {"p0": 3.0, "p1": 3.0, "p2": 2.0} for q in ("q1", "q2", "q3")}
    traffic = ExperimentTraffic(last_day=date(2026, 11, 25), days=3, visitors=2000)
    run = list(simulate_visitors("t", ["q1", "q2", "q3"], judged, search, lambda p: 10.0, traffic))
    answers = {r.token: r for r in run if isinstance(r, Answer)}
    variants: dict[str, set[str]] = {}
    for a in answers.values():
        assert a.visitor_id is not None
        variants.setdefault(a.visitor_id, set()).add(a.variant)
    assert len(variants) == 2000 and all(len(v) == 1 for v in variants.values())
    assert len(answers) > 2000  # visitors search more than once
    start, end = traffic.period()
    assert all(start <= a.at < end for a in answers.values())
    clicks = [r for r in run if isinstance(r, Outcome) and r.event_type == "click"]
    per = {"e1:good": 0, "e1:bad": 0}
    for c in clicks:
        assert c.attribution_token is not None
        per[answers[c.attribution_token].variant] += 1
    assert per["e1:good"] > 2 * per["e1:bad"]


def _tiny_ranker() -> str:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, len(FEATURES)))
    data = lightgbm.Dataset(x, (x[:, 0] > 0).astype(int), group=[20] * 10)
    params = {"objective": "lambdarank", "verbose": -1, "min_data_in_leaf": 5, "num_threads": 1}
    return lightgbm.train(params, data, 5).model_to_string()


def test_the_demo_experiment_is_built_once_and_reads_as_a_finished_test(
    demo_env: Any, shared_data: Path, tmp_path: Path
) -> None:
    bucket = tmp_path / "bucket"
    shutil.copytree(demo_env.store.local_path("homedepot"), bucket / "homedepot")
    settings = Settings(storage_url=f"file://{bucket}", data_dir=demo_env.data_dir, auth="off")
    store = open_blob_store(settings.storage_url)
    tenants = Tenants(store, ttl=0)
    traffic = ExperimentTraffic(last_day=datetime.now(UTC).date(), days=1, visitors=150)
    with pytest.raises(AisleError, match="no learned ranker"):
        build_demo_experiment(settings, tenants, shared_data, lambda *a: None, traffic=traffic)
    record = RankerStore(store).save(
        "homedepot", _tiny_ranker(), RankerRecord(version=0, features=list(FEATURES), queries=1, candidates=1)
    )
    said = build_demo_experiment(settings, tenants, shared_data, lambda *a: None, traffic=traffic)
    assert said.startswith("150 simulated visitors")
    (experiment,) = ExperimentStore(tenants.scope("homedepot")).list()
    assert experiment.simulated and experiment.status == "stopped"
    assert experiment.variants[0].changes.ranker == record.version
    assert experiment.variants[1].changes.ranker == "none"
    assert [h.action for h in experiment.history] == ["created", "started", "stopped"]
    analytics = AnalyticsEngine.from_settings(settings, store, record=False)
    body = analytics.experiment_results("homedepot", experiment)
    visitors = [v["visitors"] for v in body["variants"]]
    assert sum(visitors) == 150 and min(visitors) > 40
    assert body["variants"][0]["searches"] >= visitors[0]
    # its searches are in the analytics log: the log names this source with its period
    marked = [p for p in analytics.simulated_sources("homedepot") if p.source == SOURCE]
    assert [(p.first, p.last) for p in marked] == [(traffic.last_day, traffic.last_day)]
    again = build_demo_experiment(settings, tenants, shared_data, lambda *a: None, traffic=traffic)
    assert again == "already simulated"
    assert len(ExperimentStore(tenants.scope("homedepot")).list()) == 1
