"""Search's ``POST /recommendations`` relays predict's ``Aisle-Degraded`` header (and its status, body)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from fastapi.testclient import TestClient
from tests.support.auth import free_port, serve
from tests.support.recs import CooccurrenceRecommender, write_shop

from aisle.core.config import Settings
from aisle.core.events import open_event_store_url
from aisle.core.storage import open_blob_store
from aisle.recs.serving import RegistryModelSource

PRODUCTS = pl.DataFrame({"id": [f"p{i}" for i in range(4)], "title": [f"Product {i}" for i in range(4)]})


def test_a_degraded_prediction_is_flagged_through_search(tmp_path: Path) -> None:
    from aisle.services.predict.app import create_app as predict_app
    from aisle.services.search.app import create_app as search_app

    settings = Settings(auth="off", storage_url=f"file://{tmp_path / 'bucket'}", data_dir=tmp_path / "data")
    write_shop(open_blob_store(settings.storage_url), "shop", PRODUCTS, ["view"])
    model = CooccurrenceRecommender([["p0", "p1", "p2"]])
    dead_redis = open_event_store_url(f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
    predict = predict_app(settings, models=RegistryModelSource(lambda s, r: model), events=dead_redis)
    with serve(predict) as predict_url:
        search = search_app(settings.model_copy(update={"predict_url": predict_url}), preload=False)
        with TestClient(search) as client:
            body = {"containerId": "c1", "productIds": ["p0"]}
            anonymous = client.post("/recommendations", params={"tenant": "shop"}, json=body)
            assert anonymous.status_code == 200 and "Aisle-Degraded" not in anonymous.headers
            r = client.post("/recommendations", params={"tenant": "shop"}, json={**body, "visitorId": "v1"})
    assert r.status_code == 200, r.text
    assert r.headers["Aisle-Degraded"] == "personalization;reason=event_store_unavailable"
    assert r.json()["response_data"] == anonymous.json()["response_data"] != []
