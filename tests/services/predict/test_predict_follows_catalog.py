"""POST /predict following the catalog change log (issue 41): a product write reaches the predict
service's answers without a new catalog version, and ``storeId`` narrows them to a store's stock."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from tests.services.predict.test_bundles_api import BundleModel
from tests.support.recs import register_and_deploy
from tests.support.waiting import wait_until

from aisle.catalog.changes import ChangeLog, Op
from aisle.core.config import Settings
from aisle.core.stock import StockConfig
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import GlobalConfiguration
from aisle.recs.models.base import ModelType
from aisle.recs.serving import RegistryModelSource
from aisle.services.predict.app import create_app


def ids(client: TestClient, **extra: Any) -> list[str]:
    body = {"containerId": "c1", "productIds": ["p0"], **extra}
    r = client.post("/predict", params={"tenant": "shop"}, json=body)
    assert r.status_code == 200, r.text
    return [i["id"] for i in r.json()["response_data"]]


def write(settings: Settings, *ops: Op) -> None:
    """One acknowledged product write, as the product API appends it."""
    log = ChangeLog(Tenants(open_blob_store(settings.storage_url)).scope("shop"))
    assert log.create(log.head() + 1, list(ops))


def test_a_deleted_product_leaves_the_containers_answer(client: TestClient, settings: Settings) -> None:
    assert ids(client) == ["p1", "p2", "p3", "p4"]
    write(settings, Op("delete", "p1", 1))
    assert wait_until(lambda: "p1" not in ids(client), "the predict service follows the delete")
    assert ids(client) == ["p2", "p3", "p4", "p5"]


def test_store_id_filters_by_the_stores_inventory(client: TestClient, settings: Settings) -> None:
    stock = {"inventories": {"s-1": {"availability": "IN_STOCK", "quantity": 1}}}
    assert ids(client)  # the table is loaded: the follower thread applies what comes next
    write(settings, Op("patch", "p3", 1, stock), Op("patch", "p5", 1, stock))
    strict = {"strictFiltering": True}
    in_store = lambda: ids(client, storeId="s-1", predictParams=strict) == ["p3", "p5"]  # noqa: E731
    assert wait_until(in_store, "store s-1's stock is followed")
    assert ids(client, storeId="s-2", predictParams=strict) == []


def test_a_malformed_store_id_is_422(client: TestClient) -> None:
    body = {"containerId": "c1", "productIds": ["p0"], "storeId": "a/b"}
    r = client.post("/predict", params={"tenant": "shop"}, json=body)
    assert r.status_code == 422 and r.json()["error"]["code"] == "validation_error"
    schema = client.get("/openapi.json").json()["components"]["schemas"]["PredictRequest"]
    assert "storeId" in schema["properties"]


def test_a_deleted_or_hidden_product_is_never_bundled(settings: Settings, shop: str) -> None:
    store = open_blob_store(settings.storage_url)
    register_and_deploy(store, "shop", "bundler", ModelType.BUNDLE_RECOMMENDATIONS)
    hide = GlobalConfiguration(stock=StockConfig(policy="hide"))  # type: ignore[arg-type]
    Tenants(store).write_config("shop", {"global_configuration.json": hide})
    model = BundleModel()
    app = create_app(settings, models=RegistryModelSource(lambda scope, record: model), warm_interval_s=0)
    body = {"productId": "p0", "perCategory": 2}

    def bundled() -> dict[str, list[str]]:
        r = client.post("/bundles/recommendations", params={"tenant": "shop"}, json=body)
        assert r.status_code == 200, r.text
        return {
            c["category"]: [p["id"] for p in c["products"]]
            for c in r.json()["response_data"][0]["categories"]
        }

    with TestClient(app) as client:
        assert bundled() == {"shoes": ["p1", "p2"], "bags": ["p4", "p5"]}
        write(settings, Op("delete", "p1", 1), Op("patch", "p4", 1, {"availability": "OUT_OF_STOCK"}))
        expected = {"shoes": ["p2", "p3"], "bags": ["p5", "p6"]}
        assert wait_until(lambda: bundled() == expected, "the bundles follow the delete and the stock")
