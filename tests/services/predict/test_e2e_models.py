"""End to end with real trained models: train and register (issue 4's training code), deploy through the
edit service's job (real artifact loading), attach to containers, then serve through the predict service.

Data: a REES46 tenant (its products with brand, price, category) with session kNN (also-view),
co-purchase (bought-together, sessions as baskets), good/better/best tiers and bundles, all trained on
the file's own events.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from fastapi.testclient import TestClient
from tests.support.recs import rees46_catalog, write_tenant
from tests.support.waiting import wait_until

from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import tenant_scope
from aisle.services.edit.app import create_app as create_edit
from aisle.services.predict.app import create_app as create_predict

T = {"tenant": "rees46"}
MODEL_IDS = ("also-view", "bought-together", "gbb", "bundles")


@pytest.fixture(scope="module")
def services(
    shared_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[TestClient, TestClient]]:
    from aisle.recs.events import rees46_events
    from aisle.recs.models.bundles import BundleParams, train_bundles
    from aisle.recs.training import save_model, train_also_view, train_fbt, train_gbb

    tmp = tmp_path_factory.mktemp("e2e")
    settings = Settings(auth="off", storage_url=f"file://{tmp / 'bucket'}", data_dir=tmp / "data")
    store = open_blob_store(settings.storage_url)
    events = rees46_events(shared_data)
    raw = pl.read_csv(shared_data / "rees46" / "events.csv", schema_overrides={"product_id": pl.Utf8})
    products = rees46_catalog(raw).with_columns(pl.col("category").fill_null("other"))
    write_tenant(store, "rees46", products, event_types=["view", "add_to_cart", "purchase"])
    scope = tenant_scope(store, "rees46")
    baskets = events.select(pl.col("session_id").alias("basket_id"), "item_id")
    categories = products.select(pl.col("id").alias("item_id"), "category").filter(
        pl.col("category") != "other"
    )
    bundle_model = train_bundles(baskets, categories, BundleParams(min_support=3, min_lift=1.0))
    for model_id, model in (
        ("also-view", train_also_view(events)),
        ("bought-together", train_fbt(baskets, None)),
        ("gbb", train_gbb(products)),
        ("bundles", bundle_model),
    ):
        save_model(scope, "rees46", model, model_id=model_id, metrics={"hr@20": 0.1})
    bundle_seed = next(pid for pid in products["id"].to_list() if bundle_model.plans(pid))
    with (
        TestClient(create_edit(settings, job_poll_s=0.05)) as edit,
        TestClient(create_predict(settings, warm_interval_s=0)) as predict,
    ):
        yield edit, predict, bundle_seed


def wait_job(client: TestClient, job_id: str) -> dict[str, Any]:
    """The job once it completed or failed."""

    def ended() -> dict[str, Any] | None:
        job: dict[str, Any] = client.get(f"/jobs/{job_id}", params=T).json()
        return job if job["status"] in ("completed", "failed") else None

    return wait_until(ended, f"job {job_id} ends")


@pytest.fixture(scope="module")
def deployed(services: tuple[TestClient, TestClient, str]) -> tuple[TestClient, TestClient, str]:
    edit = services[0]
    for model_id in MODEL_IDS:
        job = wait_job(edit, edit.post(f"/models/{model_id}/deploy", params=T).json()["jobId"])
        assert job["status"] == "completed", job
        # warmed with the catalog's first three products, up to 20 items each: each model serves some
        assert 0 < job["result"]["warmupItems"] <= 3 * 20
        slot = {"slotConfigId": "main", "modelId": model_id, "itemCount": 20}
        r = edit.post("/containers", params=T, json={"containerId": model_id, "slotConfigurations": [slot]})
        assert r.status_code == 201, r.text
    return services


@pytest.fixture(scope="module")
def seeds(shared_data: Path) -> list[str]:
    raw = pl.read_csv(shared_data / "rees46" / "events.csv", schema_overrides={"product_id": pl.Utf8})
    top = raw.group_by("product_id").len().sort(["len", "product_id"], descending=True)
    return [str(x) for x in top["product_id"].head(10).to_list()]


@pytest.mark.parametrize("container", ["also-view", "bought-together", "gbb", "bundles"])
def test_each_deployed_model_serves_its_container(
    deployed: tuple[TestClient, TestClient, str], seeds: list[str], container: str
) -> None:
    _, predict, _ = deployed
    body = {
        "containerId": container,
        "productIds": [seeds[0]],
        "predictParams": {"debug": True, "returnProduct": True},
    }
    r = predict.post("/predict", params=T, json=body)
    assert r.status_code == 200, r.text
    items = r.json()["response_data"]
    assert len(items) == 20 and seeds[0] not in {i["id"] for i in items}
    assert {i["explanation"]["modelId"] for i in items} == {container}
    assert all("name" in i for i in items)
    if container == "gbb":
        assert {i["label"] for i in items if "label" in i} >= {"good", "better", "best"}


def test_filter_action_with_a_real_model(
    deployed: tuple[TestClient, TestClient, str], seeds: list[str]
) -> None:
    _, predict, _ = deployed
    cheap = {"type": "FILTER", "condition": {"op": "lt", "field": "price", "value": 100}}
    body = {"containerId": "also-view", "productIds": [seeds[0]], "actions": [cheap],
            "predictParams": {"returnProduct": True, "strictFiltering": True}}  # fmt: skip
    items = predict.post("/predict", params=T, json=body).json()["response_data"]
    assert items and all(i["price"] < 100 for i in items)


def test_bundles_with_the_real_bundle_model(
    deployed: tuple[TestClient, TestClient, str], seeds: list[str]
) -> None:
    _, predict, seed = deployed
    plans = predict.get("/bundles", params={**T, "productId": seed}).json()["response_data"]
    assert plans and all(c["products"] == [] for p in plans for c in p["categories"])
    body = {"productId": seed, "containerId": "bundles", "bundles": plans, "perCategory": 2}
    filled = predict.post("/bundles/recommendations", params=T, json=body).json()["response_data"]
    assert [p["name"] for p in filled] == [p["name"] for p in plans]
    assert any(c["products"] for p in filled for c in p["categories"])
    assert all(len(c["products"]) <= 2 for p in filled for c in p["categories"])


def test_evaluation_and_models_listing(
    deployed: tuple[TestClient, TestClient, str], seeds: list[str]
) -> None:
    edit, predict, _ = deployed
    body = {"modelType": "CUSTOMERS_ALSO_VIEW", "modelName": "also-view", "productIds": [seeds[0]], "k": 5}
    data = predict.post("/evaluation", params=T, json=body).json()["response_data"]
    assert data["metrics"] == {"hr@20": 0.1} and len(data["items"]) == 5
    models = edit.get("/models", params={**T, "pageType": "product"}).json()["models"]
    assert {m["model_id"] for m in models} == set(MODEL_IDS)
    assert all(m["deployment"]["status"] == "deployed" for m in models)
