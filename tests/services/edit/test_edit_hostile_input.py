"""Hostile input to the edit service: every request the hostile-client review answered with a 500 now
gets a 4xx naming what was wrong, and nothing is stored.

Ids go through one rule (``aisle.core.validation``): resource ids are what object-store keys are made
of, so control characters and 256-character ids never reach the store.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from fastapi.testclient import TestClient

from aisle.core.storage import BlobStore

T = {"tenant": "shop"}
LONG = "0" * 256
SLOT = {"slotConfigId": "main", "modelId": "live"}


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/models/a%0Bb", None),
        ("GET", "/jobs/a%0Bb", None),
        ("POST", "/models/a%16b/deploy", None),
        ("POST", "/models/a%16b/undeploy", None),
        ("GET", f"/containers/{LONG}", None),
        ("GET", f"/jobs/{LONG}", None),
        ("GET", f"/models/{LONG}", None),
        ("PUT", f"/containers/{LONG}", {"version": 1, "slotConfigurations": [SLOT]}),
        ("DELETE", "/containers/a%00b", None),
        (
            "POST",
            "/containers",
            {"containerId": "c", "slotConfigurations": [{**SLOT, "modelId": "a\u000bb"}]},
        ),
        ("POST", "/containers", {"containerId": "c", "slotConfigurations": [{**SLOT, "modelId": LONG}]}),
        ("POST", "/containers", {"containerId": "a\u000bb", "slotConfigurations": [SLOT]}),
    ],
)
def test_malformed_ids_are_422_before_any_lookup(
    client: TestClient, store: BlobStore, method: str, path: str, body: Any
) -> None:
    before = sorted(store.list("shop/"))
    r = client.request(method, path, params=T, json=body)
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "validation_error"
    assert "should match pattern" in error["message"]
    assert sorted(store.list("shop/")) == before


def test_user_features_refuse_numbers_beyond_2_53_nan_and_deep_nesting(client: TestClient) -> None:
    huge = client.post("/user_features", params=T, json={"userId": "u1", "features": {"a": 10**29}})
    assert huge.status_code == 400 and huge.json()["error"]["code"] == "value_invalid"
    assert "features.a: must be between -2^53 and 2^53" in huge.json()["error"]["message"]
    nan = client.post(
        "/user_features",
        params=T,
        content=b'{"userId": "u1", "features": {"brand_affinity": {"Nike": NaN}}}',
        headers={"content-type": "application/json"},
    )
    assert nan.status_code == 400
    assert "brand_affinity.Nike: must be a finite number" in nan.json()["error"]["message"]
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(40):
        node["x"] = {}
        node = node["x"]
    assert client.post("/user_features", params=T, json={"userId": "u1", "features": deep}).status_code == 400
    ok = {"userId": "u1", "features": {"brand_affinity": {"Nike": 0.8}, "n": 2**53}}
    assert client.post("/user_features", params=T, json=ok).status_code == 200


def test_event_timestamps_far_in_the_future_are_refused(client: TestClient) -> None:
    event = {"visitorId": "v1", "eventType": "view", "productId": "p1"}
    for ts in ("9999-12-31T23:59:59Z", time.time() + 3 * 86_400, -1, float(2**60)):
        r = client.post("/events", params=T, json={**event, "timestamp": ts})
        assert r.status_code == 400, (ts, r.text)
        assert r.json()["error"]["code"] == "event_time_invalid"
        assert r.json()["error"]["message"].startswith("events[0].timestamp")
    assert client.post("/events", params=T, json={**event, "timestamp": time.time()}).status_code == 202
    assert (
        client.post("/events", params=T, json={**event, "timestamp": "2019-10-01T00:00:00Z"}).status_code
        == 202
    )
    events = client.get("/events", params={**T, "visitorId": "v1"}).json()["events"]
    assert sorted(e["timestamp"] for e in events)[0] == 1569888000.0 and len(events) == 2
    control = client.get("/events", params={**T, "visitorId": "v\u00071"})
    assert control.status_code == 422


def test_put_takes_the_container_as_get_returns_it(client: TestClient) -> None:
    created = client.post("/containers", params=T, json={"containerId": "home", "slotConfigurations": [SLOT]})
    assert created.status_code == 201, created.text
    read = client.get("/containers/home", params=T).json()
    assert {"containerId", "createdAt", "updatedAt", "version"} <= set(read)
    read["name"] = "Home page"
    replaced = client.put("/containers/home", params=T, json=read)
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["version"] == 2 and replaced.json()["name"] == "Home page"
    assert replaced.json()["createdAt"] == read["createdAt"]

    elsewhere = {**replaced.json(), "containerId": "other"}
    r = client.put("/containers/home", params=T, json=elsewhere)
    assert r.status_code == 400 and r.json()["error"]["code"] == "container_id_mismatch"
    assert client.get("/containers/home", params=T).json()["version"] == 2


def test_unknown_query_parameters_are_refused(client: TestClient) -> None:
    r = client.get("/containers", params={**T, "limt": 5})
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "unknown_parameter"
    assert r.json()["error"]["details"]["unknown"] == ["limt"]
