"""Store inventory over HTTP (issue 41, "Stock"): ``PUT /products/{id}/inventory/{storeId}`` merged by
each store's own update time, the batch form that fails a bad operation alone, the 404/413/422
refusals with their codes, a bad ``availability`` in a product write, and ``GET /stores``."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from tests.support.product_shop import TENANT, shop

from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.services.search.app import create_app

Q = {"tenant": TENANT}


def _at(minutes: int) -> str:
    return (datetime.now(UTC) + timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")


EARLY, LATE = _at(10), _at(20)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(
        auth="off",
        storage_url=f"file://{tmp_path / 'bucket'}",
        data_dir=tmp_path / "data",
        predict_url="http://127.0.0.1:9",
        search_budget_ms=60_000,
        catalog_compact_seconds=0,
    )
    shop(open_blob_store(settings.storage_url), tmp_path)
    with TestClient(create_app(settings, preload=False)) as c:
        yield c


def test_a_store_inventory_is_merged_by_its_own_time(client: TestClient) -> None:
    assert client.get("/stores", params=Q).json() == {"stores": []}
    put = client.put(
        "/products/1/inventory/store-1",
        params=Q,
        json={"availability": "IN_STOCK", "quantity": 4, "updateTime": LATE},
    )
    assert put.status_code == 200, put.text
    assert put.json() == {
        "id": "1", "op": "inventory", "status": "applied", "error": None, "staleFields": [],
        "ignoredFields": [], "sequence": 1,
    }  # fmt: skip
    other = client.put("/products/1/inventory/store-2", params=Q, json={"availability": "OUT_OF_STOCK"})
    assert other.json()["status"] == "applied" and other.json()["sequence"] == 2
    old = client.put(
        "/products/1/inventory/store-1", params=Q, json={"availability": "OUT_OF_STOCK", "updateTime": EARLY}
    )
    assert old.status_code == 200 and old.json()["status"] == "stale"
    assert old.json()["staleFields"] == ["inventories/store-1"] and old.json()["sequence"] == 2
    got = client.get("/products/1", params=Q).json()
    assert got["product"]["inventories"] == {
        "store-1": {"availability": "IN_STOCK", "quantity": 4},
        "store-2": {"availability": "OUT_OF_STOCK", "quantity": None},
    }
    assert set(got["fieldUpdateTimes"]) == {"inventories/store-1", "inventories/store-2"}
    assert got["product"]["title"] == "Red Running Shoe"
    assert client.get("/stores", params=Q).json() == {"stores": ["store-1", "store-2"]}


def test_refusals_name_what_is_wrong(client: TestClient) -> None:
    bad = client.put("/products/1/inventory/s1", params=Q, json={"availability": "SOLD_OUT"})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "validation_error"
    assert "availability" in bad.json()["error"]["message"]
    negative = client.put(
        "/products/1/inventory/s1", params=Q, json={"availability": "IN_STOCK", "quantity": -1}
    )
    assert negative.status_code == 422 and "quantity" in negative.json()["error"]["message"]
    store = client.put("/products/1/inventory/s%20one", params=Q, json={"availability": "IN_STOCK"})
    assert store.status_code == 422 and "store_id" in store.json()["error"]["message"]
    when = client.put(
        "/products/1/inventory/s1", params=Q, json={"availability": "IN_STOCK", "updateTime": "x"}
    )
    assert when.status_code == 400 and when.json()["error"]["code"] == "update_time_invalid"
    missing = client.put("/products/9/inventory/s1", params=Q, json={"availability": "IN_STOCK"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "product_not_found"
    tenant = client.put(
        "/products/1/inventory/s1", params={"tenant": "nosuch"}, json={"availability": "IN_STOCK"}
    )
    assert tenant.status_code == 404 and tenant.json()["error"]["code"] == "tenant_not_found"
    product = client.patch("/products/1", params=Q, json={"availability": "sold out"})
    assert product.status_code == 422 and product.json()["error"]["code"] == "product_invalid"
    assert product.json()["error"]["details"] == {"field": "availability"}
    nested = client.patch("/products/1", params=Q, json={"inventories": {"s1": {"availability": "NO"}}})
    assert nested.status_code == 422 and nested.json()["error"]["details"] == {
        "field": "inventories.s1.availability"
    }
    assert client.get("/stores", params={"tenant": "nosuch"}).status_code == 404
    assert client.get("/products/1", params=Q).json()["sequence"] == 0  # nothing was written


def test_a_batch_answers_each_operation_and_refuses_past_10000(client: TestClient) -> None:
    operations = [
        {"id": "1", "storeId": "s1", "availability": "IN_STOCK", "quantity": 2},
        {"id": "9", "storeId": "s1", "availability": "IN_STOCK"},
        {"id": "2", "storeId": "s1", "availability": "SOLD_OUT"},
        {"id": "2", "storeId": "bad store", "availability": "IN_STOCK"},
        {"id": "3", "storeId": "s2", "availability": "PREORDER", "quantity": -3},
        {"id": "3", "storeId": "s2", "availability": "preorder", "updateTime": LATE},
        {"id": "3", "storeId": "s2", "availability": "OUT_OF_STOCK", "updateTime": EARLY},
    ]
    r = client.post("/products/inventory/batch", params=Q, json={"operations": operations})
    assert r.status_code == 200, r.text
    body = r.json()
    assert [(x["id"], x["storeId"], x["status"]) for x in body["results"]] == [
        ("1", "s1", "applied"), ("9", "s1", "failed"), ("2", "s1", "failed"), ("2", "bad store", "failed"),
        ("3", "s2", "failed"), ("3", "s2", "applied"), ("3", "s2", "stale"),
    ]  # fmt: skip
    errors = [(x["error"]["code"], x["error"]["field"]) for x in body["results"] if x["error"]]
    assert errors == [
        ("product_not_found", None), ("product_invalid", "availability"), ("product_invalid", "storeId"),
        ("product_invalid", "quantity"),
    ]  # fmt: skip
    assert (body["applied"], body["stale"], body["failed"], body["sequence"]) == (2, 1, 4, 1)
    assert client.get("/products/3", params=Q).json()["product"]["inventories"] == {
        "s2": {"availability": "PREORDER", "quantity": None}
    }
    too_many = client.post(
        "/products/inventory/batch", params=Q, json={"operations": [operations[0]] * 10_001}
    )
    assert too_many.status_code == 413 and too_many.json()["error"]["code"] == "batch_too_large"
    assert client.get("/stores", params=Q).json() == {"stores": ["s1", "s2"]}
