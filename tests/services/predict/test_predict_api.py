"""POST /predict and friends over the ASGI app: the spec's envelope, statuses, documented errors."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.support.auth import AuthKit
from tests.support.waiting import wait_until

from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.services.predict.app import create_app


def predict(client: TestClient, body: dict[str, Any], tenant: str | None = "shop") -> Any:
    params = {} if tenant is None else {"tenant": tenant}
    return client.post("/predict", params=params, json=body)


def test_predict_envelope_and_items(client: TestClient) -> None:
    r = predict(client, {"containerId": "c1", "productIds": ["p0"], "predictParams": {"returnProduct": True}})
    assert r.status_code == 200
    body = r.json()
    assert body["success"] is True and body["error"] is None
    assert [i["id"] for i in body["response_data"]] == ["p1", "p2", "p3", "p4"]
    first = body["response_data"][0]
    assert first == {"id": "p1", "score": 1.0, "name": "Product 1", "description": "About 1", "price": 20.0}


def test_debug_explanation_and_no_score(client: TestClient) -> None:
    body = {"containerId": "c1", "productIds": ["p0"], "predictParams": {"debug": True, "returnScore": False}}
    item = predict(client, body).json()["response_data"][0]
    assert "score" not in item and item["explanation"]["slotConfigId"] == "main"


def test_actions_filter_boost_bury(client: TestClient) -> None:
    body = {
        "containerId": "c1",
        "productIds": ["p0"],
        "predictParams": {"strictFiltering": True},
        "actions": [
            {
                "type": "FILTER",
                "condition": {"op": "not", "condition": {"op": "eq", "field": "brand", "value": "puma"}},
            },
            {"type": "BOOST", "weight": 2, "condition": {"op": "gte", "field": "price", "value": 50}},
        ],
    }
    assert [i["id"] for i in predict(client, body).json()["response_data"]] == ["p4", "p5", "p1"]


@pytest.mark.parametrize(
    ("body", "tenant", "status", "code"),
    [
        ({"containerId": "c1", "productIds": ["p0"]}, None, 422, "validation_error"),
        ({"containerId": "c1", "productIds": ["p0"]}, "nope", 404, "tenant_not_found"),
        # a malformed name fails the shared TenantQuery pattern (was 404 tenant_not_found before issue 15)
        ({"containerId": "c1", "productIds": ["p0"]}, "../etc", 422, "validation_error"),
        ({"containerId": "zz", "productIds": ["p0"]}, "shop", 404, "container_not_found"),
        ({"containerId": "c1", "productIds": []}, "shop", 422, "validation_error"),
        ({"containerId": "c1", "productIds": ["p0"], "modelIds": ["x"]}, "shop", 400, "model_ids_unknown"),
        ({"containerId": "idle", "productIds": ["p0"]}, "shop", 409, "model_not_deployed"),
        (
            {"containerId": "c1", "productIds": ["p0"],
             "actions": [{"type": "FILTER", "condition": {"op": "eq", "field": "colour", "value": 1}}]},
            "shop", 400, "condition_field_unknown",
        ),
        (
            {"containerId": "c1", "productIds": ["p0"],
             "actions": [{"type": "FILTER", "condition": {"op": "xx"}}]},
            "shop", 422, "validation_error",
        ),
        ({"containerId": "c1", "productIds": ["p0"], "actions": [{"type": "SHUFFLE"}]},
         "shop", 422, "validation_error"),
        ({"productIds": ["p0"]}, "shop", 422, "validation_error"),
        ([1, 2], "shop", 422, "validation_error"),
    ],
)  # fmt: skip
def test_errors_keep_the_envelope(
    client: TestClient, body: Any, tenant: str | None, status: int, code: str
) -> None:
    r = predict(client, body, tenant)
    assert r.status_code == status, r.text
    payload = r.json()
    assert payload["success"] is False and payload["response_data"] == [] and payload["error"]["code"] == code


def test_missing_tenant_is_named(client: TestClient) -> None:
    assert (
        "tenant"
        in predict(client, {"containerId": "c1", "productIds": ["p0"]}, None).json()["error"]["message"]
    )


def test_garbage_never_reaches_500(client: TestClient) -> None:
    bad: list[Any] = [b"{", b"null", b'"x"', b'{"containerId": 5, "productIds": "p0"}', b"\xff\xfe"]
    deep: dict[str, Any] = {"op": "eq", "field": "brand", "value": "x"}
    for _ in range(40):
        deep = {"op": "not", "condition": deep}
    bad.append(
        {"containerId": "c1", "productIds": ["p0"], "actions": [{"type": "FILTER", "condition": deep}]}
    )
    for body in bad:
        if isinstance(body, bytes):
            r = client.post(
                "/predict?tenant=shop", content=body, headers={"content-type": "application/json"}
            )
        else:
            r = predict(client, body)
        assert 400 <= r.status_code < 500 and r.json()["success"] is False


def test_evaluation_returns_items_and_metrics(client: TestClient) -> None:
    body = {"modelType": "CUSTOMERS_ALSO_VIEW", "modelName": "idle", "productIds": ["p0"], "k": 2}
    r = client.post("/evaluation", params={"tenant": "shop"}, json=body)
    assert r.status_code == 200, r.text
    data = r.json()["response_data"]
    assert data["metrics"] == {"hr@20": 0.5} and [i["id"] for i in data["items"]] == ["p1", "p2"]
    wrong = client.post("/evaluation", params={"tenant": "shop"}, json={**body, "modelType": "SIMILAR_ITEMS"})
    assert wrong.status_code == 400 and wrong.json()["error"]["code"] == "model_type_mismatch"


def test_health_needs_no_tenant(client: TestClient) -> None:
    assert client.get("/health").json()["service"] == "predict"


def test_openapi_documents_failures_and_conditions(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    responses = spec["paths"]["/predict"]["post"]["responses"]
    assert {"400", "404", "409", "422"} <= set(responses)
    assert "model_ids_unknown" in responses["400"]["description"]
    schemas = spec["components"]["schemas"]
    assert {"AndCondition", "NotCondition", "InCondition", "ContainsCondition"} <= set(schemas)
    assert client.get("/docs").status_code == 200


def test_auth_is_wired(settings: Settings, shop: str) -> None:
    kit = AuthKit(open_blob_store(settings.storage_url))
    app = create_app(kit.settings(storage_url=settings.storage_url, data_dir=settings.data_dir))
    body = {"containerId": "c1", "productIds": ["p0"]}
    with TestClient(app) as c:
        r = c.post("/predict?tenant=shop", json=body)
        assert r.status_code == 401 and r.json()["success"] is False
        wrong_scope = kit.token(["shop"], scopes=["search:read"])
        r = c.post("/predict?tenant=shop", json=body, headers={"authorization": f"Bearer {wrong_scope}"})
        assert r.status_code == 403
        other_tenant = kit.token(["other"], scopes=["recs:read"])
        r = c.post("/predict?tenant=shop", json=body, headers={"authorization": f"Bearer {other_tenant}"})
        assert r.status_code == 403
        assert c.get("/health").status_code == 200


def test_deployed_models_are_loaded_before_the_first_request(settings: Settings, shop: str) -> None:

    from tests.support.recs import CooccurrenceRecommender

    from aisle.recs.serving import RegistryModelSource

    loads: list[str] = []

    def loader(scope: object, record: Any) -> CooccurrenceRecommender:
        loads.append(record.model_id)
        return CooccurrenceRecommender([["p0", "p1"]])

    app = create_app(settings, models=RegistryModelSource(loader), warm_interval_s=0.05)
    with TestClient(app):
        wait_until(lambda: loads, "the warm-up loads a model", every=0.02)
    assert loads == ["m1"]  # the deployed model, not the idle one
