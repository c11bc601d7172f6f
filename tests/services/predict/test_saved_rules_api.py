"""POST /predict and POST /bundles/recommendations honour the container's saved recommendation rules."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from tests.services.predict.test_bundles_api import BundleModel
from tests.support.recs import CooccurrenceRecommender, register_and_deploy

from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.recs.containers import ContainerBody, ContainerStore
from aisle.recs.models.base import ModelType
from aisle.recs.serving import RegistryModelSource
from aisle.services.predict.app import create_app

T = {"tenant": "shop"}
ASK = {"containerId": "c1", "productIds": ["p0"]}
CHEAP = {"type": "FILTER", "condition": {"op": "lt", "field": "price", "value": 35}}
SESSIONS = [["p0", "p1"]] * 5 + [["p0", "p2"]] * 4 + [["p0", "p3"]] * 3 + [["p0", "p4"]] * 2


def save_rules(settings: Settings, container_id: str, rules: list[dict[str, Any]]) -> None:
    containers = ContainerStore(Tenants(open_blob_store(settings.storage_url)).scope("shop"))
    found = containers.get(container_id)
    body = ContainerBody.model_validate(
        {**found.model_dump(include={"slotConfigurations"}), "recommendationRules": rules}
    )
    containers.replace(container_id, body, version=found.version)


def ids(r: Any) -> list[str]:
    assert r.status_code == 200, r.text
    return [i["id"] for i in r.json()["response_data"]]


def test_a_direct_predict_honours_the_saved_rules(client: TestClient, settings: Settings) -> None:
    before = ids(client.post("/predict", params=T, json=ASK))
    assert before == ["p1", "p2", "p3", "p4"]
    save_rules(settings, "c1", [CHEAP])  # price < 35 keeps p1 (20) and p2 (30)
    app = create_app(settings, models=RegistryModelSource(lambda s, r: CooccurrenceRecommender(SESSIONS)))
    with TestClient(app) as fresh:  # a new process: nothing cached
        assert ids(fresh.post("/predict", params=T, json=ASK)) == ["p1", "p2"]
        unruled = {**ASK, "predictParams": {"containerRules": False}}
        assert ids(fresh.post("/predict", params=T, json=unruled)) == before
        too_many = {**ASK, "actions": [CHEAP] * 50}
        r = fresh.post("/predict", params=T, json=too_many)
        assert r.status_code == 400 and r.json()["error"]["code"] == "value_invalid"
        assert r.json()["success"] is False


def test_bundle_recommendations_of_a_container_honour_its_saved_rules(settings: Settings, shop: str) -> None:
    store = open_blob_store(settings.storage_url)
    register_and_deploy(store, "shop", "bundler", ModelType.BUNDLE_RECOMMENDATIONS)
    slots = [
        {"slotConfigId": "main", "modelId": "bundler", "itemCount": 3},
        {"slotConfigId": "other", "modelId": "m1", "itemCount": 3, "placement": 1},
    ]
    not_p5 = {
        "type": "FILTER",
        "condition": {"op": "ne", "field": "id", "value": "p5"},
        "slotConfigId": "main",
    }
    not_p4 = {
        "type": "FILTER",
        "condition": {"op": "ne", "field": "id", "value": "p4"},
        "slotConfigId": "other",
    }
    rules = {"slotConfigurations": slots, "recommendationRules": [not_p5, not_p4]}
    ContainerStore(Tenants(store).scope("shop")).create("bundles", ContainerBody.model_validate(rules))
    app = create_app(settings, models=RegistryModelSource(lambda s, r: BundleModel()), warm_interval_s=0)
    ask = {"productId": "p0", "perCategory": 2}
    with TestClient(app) as c:

        def bags(body: dict[str, Any]) -> list[str]:
            r = c.post("/bundles/recommendations", params=T, json=body)
            assert r.status_code == 200, r.text
            cats = r.json()["response_data"][0]["categories"]
            return next([p["id"] for p in cat["products"]] for cat in cats if cat["category"] == "bags")

        assert bags(ask) == ["p4", "p5"]  # no container: the tenant's bundle model, no saved rules
        # the bundle slot's rule applies, the other slot's does not
        assert bags({**ask, "containerId": "bundles"}) == ["p4", "p6"]
