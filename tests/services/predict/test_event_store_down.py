"""Predict with its event store unreachable: anonymous answers, flagged in ``Aisle-Degraded``, never a 503.

The event store is a real Redis client pointed at a loopback port where nothing listens (what predict
sees while Redis is down); the outage under load, with a real Redis killed and restarted, is
``tests/services/edit/test_redis_outage.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from tests.services.predict.conftest import SESSIONS
from tests.support.auth import free_port
from tests.support.recs import CooccurrenceRecommender

from aisle.core.config import Settings
from aisle.core.events import open_event_store_url
from aisle.recs.serving import RegistryModelSource
from aisle.services.predict.app import create_app

T = {"tenant": "shop"}
FLAG = "personalization;reason=event_store_unavailable"


@pytest.fixture
def down(settings: Settings, shop: str) -> Iterator[TestClient]:
    model = CooccurrenceRecommender(SESSIONS)
    events = open_event_store_url(f"redis://127.0.0.1:{free_port()}/0")
    app = create_app(settings, models=RegistryModelSource(lambda scope, record: model), events=events)
    with TestClient(app) as c:
        yield c


def test_predict_answers_anonymously_and_says_so(down: TestClient) -> None:
    anonymous = down.post("/predict", params=T, json={"containerId": "c1", "productIds": ["p0"]})
    assert anonymous.status_code == 200 and "Aisle-Degraded" not in anonymous.headers
    for who in ({"visitorId": "v1"}, {"userId": "u1"}, {"visitorId": "v1", "userId": "u1"}):
        r = down.post("/predict", params=T, json={"containerId": "c1", "productIds": ["p0"], **who})
        assert r.status_code == 200, r.text
        assert r.headers["Aisle-Degraded"] == FLAG
        assert r.json()["response_data"] == anonymous.json()["response_data"]


def test_evaluation_is_flagged_too(down: TestClient) -> None:
    body = {"productIds": ["p0"], "visitorId": "v1", "modelType": "CUSTOMERS_ALSO_VIEW", "modelName": "m1"}
    r = down.post("/evaluation", params=T, json=body)
    assert r.status_code == 200, r.text
    assert r.headers["Aisle-Degraded"] == FLAG and "degraded" not in r.json()["response_data"]


def test_the_header_is_documented(down: TestClient) -> None:
    paths = down.get("/openapi.json").json()["paths"]
    for path in ("/predict", "/evaluation", "/bundles/recommendations"):
        ok = paths[path]["post"]["responses"]["200"]
        assert "Aisle-Degraded" in ok["headers"]
        assert "Retry-After" in paths[path]["post"]["responses"]["503"]["headers"]
