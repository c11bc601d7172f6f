"""The edit service's ``train_ranker`` job: a tenant with (hand-made, simulated) traffic gets a ranker
learned from its clicks, saved as a version, deployed only above the traffic threshold (``deploy=threshold``)
or by winning an A/B trial against the live setting (``deploy=experiment``, the default), and served."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from fastapi.testclient import TestClient
from tests.support.jobs import finished_job
from tests.support.recs import write_tenant

from aisle.analytics.log import ParquetLog
from aisle.analytics.records import Answer, Outcome
from aisle.behaviour.trials import TREATMENT, needed_visitors
from aisle.core.config import Settings
from aisle.core.storage import BlobStore, open_blob_store
from aisle.core.tenancy import Tenants, tenant_scope
from aisle.core.tenant_config import Attribute
from aisle.experiments.model import Experiment
from aisle.experiments.store import ExperimentStore
from aisle.search.indexes import IndexRegistry
from aisle.search.pipeline import SearchPipeline, default_stages
from aisle.search.query import SearchQuery
from aisle.search.ranking.behaviour import BEHAVIOUR_FEATURES
from aisle.search.ranking.store import RankerStore
from aisle.search.training import clicks as click_training
from aisle.services.edit.app import create_app

WORDS = [
    "drill",
    "saw",
    "hammer",
    "ladder",
    "paint",
    "brush",
    "glue",
    "tape",
    "nail",
    "screw",
    "bolt",
    "lamp",
]
# per word: the product shoppers want has the word once in a short title; the others repeat it in
# longer ones (BM25 ranks them first), so only clicks can tell the wanted one
PRODUCTS = pl.DataFrame(
    {
        "id": [f"{w}-{i}" for w in WORDS for i in range(5)],
        "title": [
            f"{w} pro" if i == 4 else f"{w} {w} spare part kit number {i} for the {w} case"
            for w in WORDS
            for i in range(5)
        ],
    }
)


def _traffic(store: BlobStore, tmp: Path, searches_per_word: int) -> None:
    """Searches for every word showing its five products (the wanted one last under one ranking, first
    under the other), clicks drawn here: examination 1/position, appeal 0.8 for the wanted one, 0.1 else."""
    rng = np.random.default_rng(3)
    now = time.time() - 3600
    records: list[Answer | Outcome] = []
    for w in WORDS:
        shown = tuple(f"{w}-{i}" for i in range(5))
        for s in range(searches_per_word):
            token = f"{w}-{s}"
            order = shown if s % 2 else shown[::-1]  # two rankings (an experiment's two variants)
            records.append(Answer("shop", token, "search", now + s, order, 5, query=w, visitor_id="v"))
            for k, product in enumerate(order, 1):
                if rng.random() < (0.8 if product.endswith("-4") else 0.1) / k:
                    records.append(
                        Outcome("shop", f"{token}-{k}", "click", now + s + 1, "v", product, token, k)
                    )
    ParquetLog(store, tmp / "cache").write(records)


def _train(client: TestClient, **params: object) -> str:
    """Start a train_ranker job for tenant ``shop`` with ``params``; its job id."""
    resp = client.post("/rankers/train", params={"tenant": "shop", **params})
    assert resp.status_code == 202, resp.text
    return str(resp.json()["jobId"])


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(auth="off", storage_url=f"file://{tmp_path / 'bucket'}", data_dir=tmp_path / "data")


@pytest.fixture
def store(settings: Settings, tmp_path: Path) -> BlobStore:
    store = open_blob_store(settings.storage_url)
    write_tenant(store, "shop", PRODUCTS, attributes=[Attribute(name="title", role="title", searchable=True)])
    _traffic(store, tmp_path, searches_per_word=40)
    return store


@pytest.fixture
def client(settings: Settings, store: BlobStore) -> Iterator[TestClient]:
    with TestClient(create_app(settings, job_poll_s=0.05)) as c:
        yield c


def test_below_the_traffic_threshold_the_ranker_is_saved_not_deployed(
    client: TestClient, store: BlobStore
) -> None:
    resp = client.post("/rankers/train", params={"tenant": "shop", "source": "behaviour"})
    assert resp.status_code == 202, resp.text
    job = finished_job(client, "shop", resp.json()["jobId"])
    assert job["status"] == "completed", (job.get("error"), job.get("message"))
    result = job["result"]
    assert result["deployed"] is False and result["searches"] == 40 * len(WORDS)
    assert result["propensities"] is not None and result["propensities"][0] == 1.0
    # reversed orders move 4 of each word's 5 products (the middle one stays at 3); the two rankings
    # are not tagged as an experiment's arms: pairs harvested, none across arms
    assert result["propensityPairs"] == 4 * len(WORDS) and result["propensityAcrossArms"] == 0
    rankers = RankerStore(store)
    assert [r.source for r in rankers.versions("shop")] == ["behaviour"]
    assert rankers.versions("shop")[0].features[-len(BEHAVIOUR_FEATURES) :] == list(BEHAVIOUR_FEATURES)
    assert rankers.in_use("shop") is None  # no tenant gets worse on thin traffic


@pytest.mark.usefixtures("past_threshold")
def test_above_the_threshold_it_is_deployed_and_served(
    client: TestClient, store: BlobStore, settings: Settings
) -> None:
    job = finished_job(client, "shop", _train(client, deploy="threshold"))
    assert job["status"] == "completed" and job["result"]["deployed"] is True, job
    rankers = RankerStore(store, check_every=0)
    assert rankers.in_use("shop") == job["result"]["rankerVersion"]
    tenants = Tenants(store)
    index = IndexRegistry(tenants, settings.data_dir).get("shop")
    config = tenants.config("shop")
    served = SearchPipeline(default_stages(rankers=rankers), budget_s=5.0).run(
        index, config, SearchQuery("drill")
    )
    plain = SearchPipeline(default_stages(), budget_s=5.0).run(index, config, SearchQuery("drill"))
    ids = index.product_ids()
    assert ids[plain.output.hits[0].ord] != "drill-4"  # BM25 alone puts the wanted product lower
    assert ids[served.output.hits[0].ord] == "drill-4"  # learned from the clicks
    assert served.graph is not None and any(
        s["stage"].startswith("rerank-v") for s in served.graph.stages_tried
    )
    # served only within the depth its log's shoppers were shown: here every product of a word (5);
    # the same model limited to depth 1 reorders nothing, so search keeps BM25's first product
    record = rankers.versions("shop")[-1]
    assert record.rerank_depth == 5
    booster = rankers.load("shop", record.version).booster
    shallow = record.model_copy(update={"rerank_depth": 1})
    rankers.save("shop", booster.model_to_string(), shallow)
    limited = SearchPipeline(default_stages(rankers=rankers), budget_s=5.0).run(
        index, config, SearchQuery("drill")
    )
    assert [h.ord for h in limited.output.hits] == [h.ord for h in plain.output.hits]


def test_unknown_source_is_refused(client: TestClient) -> None:
    resp = client.post("/rankers/train", params={"tenant": "shop", "source": "magic"})
    assert resp.status_code == 422
    for bad in ({"deploy": "always"}, {"minimumDetectableEffect": 0}, {"minimumDetectableEffect": 2}):
        resp = client.post("/rankers/train", params={"tenant": "shop", **bad})
        assert resp.status_code == 422, (bad, resp.text)
        assert next(iter(bad)) in resp.text
    assert client.post("/rankers/train", params={"tenant": "nobody"}).status_code == 404


@pytest.mark.usefixtures("past_threshold")
def test_below_the_threshold_search_keeps_serving_the_previous_ranker(
    client: TestClient, store: BlobStore, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aisle.services.search.app import create_app as search_app

    first = finished_job(client, "shop", _train(client, deploy="threshold"))
    assert first["result"]["deployed"] is True
    monkeypatch.setattr(click_training, "MIN_SEARCHES", 10**9)  # the log is now below the threshold
    second = finished_job(client, "shop", _train(client, deploy="threshold"))
    assert second["status"] == "completed", second
    result = second["result"]
    assert result["deployed"] is False and result["rankerVersion"] == first["result"]["rankerVersion"] + 1
    rankers = RankerStore(store, check_every=0)
    assert [r.version for r in rankers.versions("shop")] == [1, 2]  # saved all the same
    assert rankers.in_use("shop") == 1
    with TestClient(search_app(settings)) as search:
        body = search.post("/search", json={"query": "drill", "tenant": "shop"}).json()
    stages = [s["stage"] for s in body["queryGraph"]["stages_tried"]]
    assert "rerank-v1" in stages and "rerank-v2" not in stages


# ---- deploy=experiment (the default): a trial decides ------------------------------------------
MDE = 0.5  # a large effect, so a few hundred visitors per arm decide the trial


@pytest.fixture
def past_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(click_training, "MIN_SEARCHES", 100)  # the hand-made log is past the threshold
    monkeypatch.setattr(click_training, "MIN_CLICKS", 50)


def _trial_traffic(
    store: BlobStore, tmp: Path, experiment_id: str, start: float, ctr: dict[str, float], n: int
) -> None:
    """``n`` visitors per arm, one search each, after the trial started; a click with the arm's rate."""
    rng = np.random.default_rng(5)
    records: list[Answer | Outcome] = []
    for arm, rate in ctr.items():
        for i in range(n):
            token, visitor, at = f"trial-{arm}-{i}", f"tv-{arm}-{i}", start + 0.01 + i * 1e-4
            records.append(
                Answer("shop", token, "search", at, ("drill-4", "drill-0"), 2, query="drill",
                       variant=f"{experiment_id}:{arm}", visitor_id=visitor)
            )  # fmt: skip
            if rng.random() < rate:
                records.append(Outcome("shop", f"{token}-c", "click", at + 0.2, visitor, "drill-4", token, 1))
    ParquetLog(store, tmp / "trial-cache").write(records)
    time.sleep(max(0.0, start + 1.0 - time.time()))  # every record is in the past when the job reads


def _first_trial(client: TestClient, store: BlobStore) -> tuple[dict[str, Any], Experiment]:
    job = finished_job(client, "shop", _train(client, minimumDetectableEffect=MDE))
    assert job["status"] == "completed", (job["error"], job["message"])
    result = job["result"]
    assert result["deploy"] == "experiment" and result["deployed"] is False
    assert result["trial"] is not None and result["judgedTrials"] == []
    experiment = ExperimentStore(tenant_scope(store, "shop")).get(result["trial"]["experimentId"])
    return result, experiment


def _judged(
    client: TestClient, store: BlobStore, tmp: Path, ctr: dict[str, float], n: int
) -> tuple[dict[str, Any], Experiment, dict[str, Any]]:
    """A first trial, ``n`` visitors per arm at click-through ``ctr``, then the job again: (the first
    job's result, the trial, the second job's result)."""
    result, experiment = _first_trial(client, store)
    assert experiment.startedAt is not None
    _trial_traffic(store, tmp, experiment.id, experiment.startedAt.timestamp(), ctr, n)
    job = finished_job(client, "shop", _train(client, minimumDetectableEffect=MDE))
    assert job["status"] == "completed", job
    return result, experiment, job["result"]


@pytest.mark.usefixtures("past_threshold")
def test_past_the_threshold_the_ranker_goes_on_trial_not_live(client: TestClient, store: BlobStore) -> None:
    result, experiment = _first_trial(client, store)
    assert experiment.status == "running" and experiment.primaryMetric == "clickThroughRate"
    control, treatment = experiment.variants
    assert not control.changes.changes_search()
    assert treatment.id == TREATMENT and treatment.changes.ranker == result["rankerVersion"]
    assert RankerStore(store, check_every=0).in_use("shop") is None  # nothing live before it wins


@pytest.mark.usefixtures("past_threshold")
def test_a_trial_won_on_click_through_promotes_its_ranker(
    client: TestClient, store: BlobStore, tmp_path: Path
) -> None:
    assert (needed_visitors(0.3, MDE) or 10**9) < 400
    result, experiment, second = _judged(client, store, tmp_path, {"control": 0.3, TREATMENT: 0.6}, 400)
    verdict = second["judgedTrials"][0]
    assert verdict["outcome"] == "promoted", verdict
    assert verdict["rankerVersion"] == result["rankerVersion"] and verdict["visitors"] == [400, 400]
    assert RankerStore(store, check_every=0).in_use("shop") == result["rankerVersion"]
    stored = ExperimentStore(tenant_scope(store, "shop")).get(experiment.id)
    assert stored.status == "promoted" and stored.promotedVariant == TREATMENT
    # the next version is put on trial against the new live setting
    assert second["trial"]["rankerVersion"] == result["rankerVersion"] + 1


@pytest.mark.usefixtures("past_threshold")
@pytest.mark.parametrize(
    ("ctr", "visitors", "outcome", "status"),
    [
        ({"control": 0.5, TREATMENT: 0.3}, 400, "rejected", "stopped"),  # a loss, at the horizon
        ({"control": 0.3, TREATMENT: 0.9}, 10, "collecting", "running"),  # short of its visitors
    ],
)
def test_a_trial_without_a_win_puts_nothing_live(
    client: TestClient,
    store: BlobStore,
    tmp_path: Path,
    ctr: dict[str, float],
    visitors: int,
    outcome: str,
    status: str,
) -> None:
    result, experiment, second = _judged(client, store, tmp_path, ctr, visitors)
    verdict = second["judgedTrials"][0]
    assert verdict["outcome"] == outcome, verdict
    assert ExperimentStore(tenant_scope(store, "shop")).get(experiment.id).status == status
    assert RankerStore(store, check_every=0).in_use("shop") is None
    assert second["rankerVersion"] == result["rankerVersion"] + 1  # trained and saved all the same
    if outcome == "collecting":  # even a large lift waits for the horizon (no peeking)
        assert verdict["neededVisitors"] > visitors and verdict["lift"] > 0
        assert second["trial"] is None  # one trial at a time
    else:
        assert verdict["lift"] < 0 and second["trial"] is not None


@pytest.mark.usefixtures("past_threshold")
def test_never_only_saves(client: TestClient, store: BlobStore) -> None:
    job = finished_job(client, "shop", _train(client, deploy="never"))
    assert job["result"]["trial"] is None and job["result"]["deployed"] is False
    assert ExperimentStore(tenant_scope(store, "shop")).list() == []
    assert RankerStore(store, check_every=0).in_use("shop") is None
