"""Over real HTTP (uvicorn on loopback): concurrent container writers, and predict seeing edits at once.

Predict runs with its container cache off here; the cache's staleness bound is tested in
tests/recs/test_serving_containers.py.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
from tests.support.auth import serve
from tests.support.recs import CooccurrenceRecommender

from aisle.core.config import Settings
from aisle.core.storage import BlobStore
from aisle.recs.serving import RegistryModelSource
from aisle.services.edit.app import create_app as create_edit
from aisle.services.predict.app import create_app as create_predict

T = {"tenant": "shop"}


def slot(count: int) -> dict[str, Any]:
    return {"slotConfigId": "main", "modelId": "live", "itemCount": count}


def test_twenty_concurrent_writers_lose_no_update(settings: Settings, store: BlobStore, loader: Any) -> None:
    with serve(create_edit(settings, loader=loader)) as url, httpx.Client(base_url=url, timeout=30) as client:
        r = client.post("/containers", params=T, json={"containerId": "c", "slotConfigurations": [slot(1)]})
        assert r.status_code == 201
        start = threading.Barrier(20)

        def stale_writer(n: int) -> int:
            start.wait()
            body = {"version": 1, "name": f"w{n}", "slotConfigurations": [slot(n + 1)]}
            return client.put("/containers/c", params=T, json=body).status_code

        with ThreadPoolExecutor(20) as pool:
            statuses = list(pool.map(stale_writer, range(20)))
        assert sorted(statuses) == [200] + [409] * 19  # all read version 1: one wins, the rest get 409
        winner = client.get("/containers/c", params=T).json()
        assert winner["version"] == 2

        def retrying_writer(n: int) -> int:
            for _ in range(200):
                current = client.get("/containers/c", params=T).json()["version"]
                body = {"version": current, "name": f"r{n}", "slotConfigurations": [slot(n + 1)]}
                r = client.put("/containers/c", params=T, json=body)
                if r.status_code == 200:
                    return int(r.json()["version"])
                assert r.status_code == 409
            raise AssertionError("writer starved")

        with ThreadPoolExecutor(20) as pool:
            versions = list(pool.map(retrying_writer, range(20)))
        assert sorted(versions) == list(range(3, 23))  # every write landed with its own new version
        assert client.get("/containers/c", params=T).json()["version"] == 22


def test_predict_sees_container_and_event_changes_on_the_next_request(
    settings: Settings, store: BlobStore, loader: Any
) -> None:
    model = CooccurrenceRecommender([["p0", "p1"], ["p0", "p1"], ["p0", "p2"], ["p5", "p6"]])
    uncached = settings.model_copy(update={"container_cache_seconds": 0.0})  # AISLE_CONTAINER_CACHE_SECONDS=0
    predict_app = create_predict(uncached, models=RegistryModelSource(lambda scope, record: model))
    with (
        serve(create_edit(settings, loader=loader)) as edit_url,
        serve(predict_app) as predict_url,
        httpx.Client(base_url=edit_url) as edit,
        httpx.Client(base_url=predict_url) as predict,
    ):
        edit.post("/containers", params=T, json={"containerId": "c", "slotConfigurations": [slot(2)]})
        ask = {"containerId": "c", "productIds": ["p0"], "predictParams": {"strictFiltering": True}}
        assert [i["id"] for i in predict.post("/predict", params=T, json=ask).json()["response_data"]] == [
            "p1",
            "p2",
        ]
        edit.put("/containers/c", params=T, json={"version": 1, "slotConfigurations": [slot(1)]})
        assert [i["id"] for i in predict.post("/predict", params=T, json=ask).json()["response_data"]] == [
            "p1"
        ]
        event = {"visitorId": "v9", "eventType": "purchase", "productId": "p1", "timestamp": 1_700_000_000}
        assert edit.post("/events", params=T, json=event).status_code == 202
        with_visitor = predict.post("/predict", params=T, json={**ask, "visitorId": "v9"}).json()[
            "response_data"
        ]
        assert [i["id"] for i in with_visitor] == ["p2"]
