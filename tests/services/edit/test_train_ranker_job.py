"""The edit service's ``train_ranker`` job: a tenant with (hand-made, simulated) traffic gets a ranker
learned from its clicks, saved as a version, deployed only above the traffic threshold, and served."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from fastapi.testclient import TestClient
from tests.support.jobs import finished_job
from tests.support.recs import write_tenant

from aisle.analytics.log import ParquetLog
from aisle.analytics.records import Answer, Outcome
from aisle.core.config import Settings
from aisle.core.storage import BlobStore, open_blob_store
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import Attribute
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


def test_above_the_threshold_it_is_deployed_and_served(
    client: TestClient, store: BlobStore, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(click_training, "MIN_SEARCHES", 100)
    monkeypatch.setattr(click_training, "MIN_CLICKS", 50)
    job = finished_job(
        client, "shop", client.post("/rankers/train", params={"tenant": "shop"}).json()["jobId"]
    )
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


def test_unknown_source_is_refused(client: TestClient) -> None:
    resp = client.post("/rankers/train", params={"tenant": "shop", "source": "magic"})
    assert resp.status_code == 422
    assert client.post("/rankers/train", params={"tenant": "nobody"}).status_code == 404


def test_below_the_threshold_search_keeps_serving_the_previous_ranker(
    client: TestClient, store: BlobStore, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aisle.services.search.app import create_app as search_app

    monkeypatch.setattr(click_training, "MIN_SEARCHES", 100)
    monkeypatch.setattr(click_training, "MIN_CLICKS", 50)
    first = finished_job(
        client, "shop", client.post("/rankers/train", params={"tenant": "shop"}).json()["jobId"]
    )
    assert first["result"]["deployed"] is True
    monkeypatch.setattr(click_training, "MIN_SEARCHES", 10**9)  # the log is now below the threshold
    second = finished_job(
        client, "shop", client.post("/rankers/train", params={"tenant": "shop"}).json()["jobId"]
    )
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
