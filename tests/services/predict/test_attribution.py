"""POST /predict carries an attribution token, and each answer reaches the analytics log."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow.parquet as pq
from tests.services.predict.conftest import SESSIONS
from tests.support.recs import CooccurrenceRecommender

from aisle.analytics.log import ParquetLog
from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.recs.serving import RegistryModelSource
from aisle.services.predict.app import create_app


def test_each_answer_has_its_own_token_and_is_recorded(settings: Settings, shop: str, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    model = CooccurrenceRecommender(SESSIONS)
    app = create_app(settings, models=RegistryModelSource(lambda scope, record: model))
    body = {"containerId": "c1", "productIds": ["p0"], "visitorId": "v1", "userId": "u1"}
    with TestClient(app) as client:
        before = time.time()
        first = client.post("/predict", params={"tenant": shop}, json=body).json()
        second = client.post("/predict", params={"tenant": shop}, json=body).json()
        after = time.time()
        metrics = client.get("/metrics").text
    # the service stopped (uvicorn's SIGTERM path): its buffer is written
    tokens = [first["attributionToken"], second["attributionToken"]]
    assert all(isinstance(t, str) and 0 < len(t) <= 128 for t in tokens) and tokens[0] != tokens[1]
    assert set(first) == {"success", "response_data", "error", "attributionToken"}
    assert 'aisle_analytics_records_total{outcome="recorded",service="predict"} 2.0' in metrics
    log = ParquetLog(open_blob_store(settings.storage_url), tmp_path / "cache")
    days = log.days(shop, "answers")
    rows = [r for f in log.files(shop, "answers", days[0], days[-1]) for r in pq.read_table(f).to_pylist()]
    by_token = {r["token"]: r for r in rows}
    assert set(by_token) == set(tokens)
    row = by_token[tokens[0]]
    assert row["kind"] == "recommendations" and row["container_id"] == "c1" and row["models"] == ["m1"]
    assert row["product_ids"] == [i["id"] for i in first["response_data"]]
    assert (row["visitor_id"], row["user_id"], row["total"]) == ("v1", "u1", 4)
    assert before <= row["ts"] <= after  # stamped when answered, between the two requests' edges
    assert isinstance(row["latency_ms"], float)


def test_recording_off_still_issues_tokens(settings: Settings, shop: str) -> None:
    from fastapi.testclient import TestClient

    off = settings.model_copy(update={"analytics": False})
    model = CooccurrenceRecommender(SESSIONS)
    with TestClient(create_app(off, models=RegistryModelSource(lambda scope, record: model))) as client:
        answer = client.post(
            "/predict", params={"tenant": shop}, json={"containerId": "c1", "productIds": ["p0"]}
        )
    assert answer.json()["attributionToken"]
    assert ParquetLog(open_blob_store(settings.storage_url), Path("/nonexistent")).days(shop, "answers") == []
