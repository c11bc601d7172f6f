"""AISLE_CONTAINER_CACHE_SECONDS over the predict app: how late an edit is served, and the same 404."""

from __future__ import annotations

import pydantic
import pytest
from fastapi.testclient import TestClient
from tests.support.recs import CooccurrenceRecommender

from aisle.core.config import Settings, load_settings
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.recs.containers import ContainerBody, ContainerStore
from aisle.recs.serving import RegistryModelSource
from aisle.services.predict.app import create_app

ASK = {"containerId": "c1", "productIds": ["p0"]}
MODEL = CooccurrenceRecommender([["p0", "p1"], ["p0", "p2"], ["p0", "p3"], ["p0", "p4"]])


@pytest.mark.parametrize(("seconds", "items_after_edit"), [("60", 4), ("0", 2)])
def test_cache_seconds_bound_how_late_a_container_edit_is_served(
    settings: Settings, shop: str, monkeypatch: pytest.MonkeyPatch, seconds: str, items_after_edit: int
) -> None:
    monkeypatch.setenv("AISLE_CONTAINER_CACHE_SECONDS", seconds)
    env = load_settings(auth="off", storage_url=settings.storage_url, data_dir=settings.data_dir)
    app = create_app(env, models=RegistryModelSource(lambda scope, record: MODEL), warm_interval_s=0)
    with TestClient(app) as client:
        assert len(client.post("/predict", params={"tenant": shop}, json=ASK).json()["response_data"]) == 4
        edit = ContainerStore(Tenants(open_blob_store(settings.storage_url)).scope(shop))
        slot = {"slotConfigId": "main", "modelId": "m1", "itemCount": 2}
        edit.replace("c1", ContainerBody.model_validate({"slotConfigurations": [slot]}), version=1)
        r = client.post("/predict", params={"tenant": shop}, json=ASK)
        assert len(r.json()["response_data"]) == items_after_edit


def test_missing_container_answers_the_same_404_when_cached(client: TestClient) -> None:
    answers = [
        client.post("/predict", params={"tenant": "shop"}, json={**ASK, "containerId": "zz"}) for _ in "ab"
    ]
    assert [r.status_code for r in answers] == [404, 404]
    bodies = [r.json() for r in answers]
    for resp, body in zip(answers, bodies, strict=True):  # each answer names its own request
        assert body["error"].pop("requestId") == resp.headers["x-request-id"]
    assert (
        bodies[0]
        == bodies[1]
        == {
            "success": False,
            "response_data": [],
            "error": {
                "code": "container_not_found",
                "message": "container 'zz' does not exist",
                "details": {"containerId": "zz"},
            },
        }
    )


def test_negative_cache_seconds_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AISLE_CONTAINER_CACHE_SECONDS", "-1")
    with pytest.raises(pydantic.ValidationError, match="container_cache_seconds"):
        load_settings()
