"""The product API over HTTP (issue 41): writes acknowledged with the tenant's sequence, merge patches,
stale writes, batches that fail an operation alone, imports, the 404/413/415/422 refusals, a bucket
outage that acknowledges nothing, and a write that becomes searchable (the search app follows the change
log: tests/services/search/test_live_catalog.py)."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.support.faults import S3Server
from tests.support.product_shop import TENANT, shop
from tests.support.waiting import wait_until

from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.core.storage.resolver import open_blob_store_from_settings
from aisle.services.search.app import create_app

Q = {"tenant": TENANT}


def settings_for(tmp_path: Path, **overrides: Any) -> Settings:
    return Settings(
        auth="off",
        storage_url=f"file://{tmp_path / 'bucket'}",
        data_dir=tmp_path / "data",
        predict_url="http://127.0.0.1:9",
        search_budget_ms=60_000,
        **overrides,
    )


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = settings_for(tmp_path, catalog_compact_seconds=0.2)
    shop(open_blob_store(settings.storage_url), tmp_path)
    with TestClient(create_app(settings, preload=False)) as c:
        yield c


def titles(client: TestClient, query: str) -> list[str]:
    r = client.post("/search", json={"tenant": TENANT, "query": query})
    assert r.status_code == 200, r.text
    return [p["title"] for p in r.json()["products"]]


def test_a_put_is_acknowledged_with_the_sequence_and_searchable(client: TestClient) -> None:
    assert titles(client, "trail") == []
    r = client.put("/products/1", params=Q, json={"title": "Red Trail Shoe", "brand": "Nike", "price": 59})
    assert r.status_code == 200, r.text
    assert r.json() == {
        "id": "1", "op": "upsert", "status": "applied", "error": None, "staleFields": [], "ignoredFields": [],
        "sequence": 1,
    }  # fmt: skip
    got = client.get("/products/1", params=Q).json()
    assert got["product"]["title"] == "Red Trail Shoe" and got["product"]["stock"] is None
    assert got["sequence"] == 1 and got["updateTime"].endswith("Z")
    assert wait_until(lambda: titles(client, "trail"), "the write is searched") == ["Red Trail Shoe"]


def test_a_merge_patch_changes_the_price_only(client: TestClient) -> None:
    r = client.patch(
        "/products/2",
        params=Q,
        content=b'{"price": 17.5, "brand": null}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status_code == 200 and r.json()["status"] == "applied", r.text
    got = client.get("/products/2", params=Q).json()
    assert got["product"] == {
        "title": "Blue Shirt",
        "brand": None,
        "price": 17.5,
        "stock": 0,
        "active": False,
    }
    assert set(got["fieldUpdateTimes"]) == {"price", "brand"}
    stale = client.patch("/products/2", params=Q, json={"price": 1, "updateTime": "2000-01-01T00:00:00Z"})
    assert stale.status_code == 200 and stale.json()["status"] == "stale" and stale.json()["sequence"] == 1
    assert client.get("/products/2", params=Q).json()["product"]["price"] == 17.5


def test_refusals_name_what_is_wrong(client: TestClient) -> None:
    bad = client.put("/products/9", params=Q, json={"title": "Cheap", "price": "free"})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "product_invalid"
    assert bad.json()["error"]["details"] == {"field": "price"} and "price" in bad.json()["error"]["message"]
    when = client.put("/products/9", params=Q, json={"title": "Cheap", "updateTime": "soon"})
    assert when.status_code == 400 and when.json()["error"]["code"] == "update_time_invalid"
    assert client.get("/products/9", params=Q).status_code == 404
    assert (
        client.patch("/products/9", params=Q, json={"price": 1}).json()["error"]["code"]
        == "product_not_found"
    )
    assert client.delete("/products/9", params=Q).status_code == 404
    unknown = client.put("/products/1", params={"tenant": "nosuch"}, json={"title": "x"})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "tenant_not_found"
    assert client.get("/products/1", params=Q).json()["sequence"] == 0  # nothing was written


def test_a_batch_answers_each_operation_and_refuses_past_10000(client: TestClient) -> None:
    operations = [
        {"op": "upsert", "id": "4", "product": {"title": "Yellow Sock", "price": 3}},
        {"op": "patch", "id": "1", "product": {"stock": "lots"}},
        {"op": "delete", "id": "3", "updateTime": "2000-01-01T00:00:00Z"},
        {"op": "delete", "id": "2"},
    ]
    r = client.post("/products/batch", params=Q, json={"operations": operations})
    assert r.status_code == 200, r.text
    body = r.json()
    assert [x["status"] for x in body["results"]] == ["applied", "failed", "stale", "applied"]
    assert (
        body["results"][1]["error"]["code"] == "product_invalid"
        and body["results"][1]["error"]["field"] == "stock"
    )
    assert (body["applied"], body["stale"], body["failed"], body["sequence"]) == (2, 1, 1, 1)
    too_many = client.post("/products/batch", params=Q, json={"operations": [operations[3]] * 10_001})
    assert too_many.status_code == 413 and too_many.json()["error"]["code"] == "batch_too_large"
    assert client.get("/products/4", params=Q).json()["sequence"] == 1


def test_imports_in_three_formats_and_a_full_reconciliation(client: TestClient) -> None:
    ndjson = b'{"sku": "1", "name": "Red Shoe v2"}\n{"sku": "5", "name": "Blue Hat", "cost": "oops"}\n'
    r = client.post(
        "/catalog/import", params=Q, content=ndjson, headers={"Content-Type": "application/x-ndjson"}
    )
    assert r.status_code == 200, r.text
    assert (r.json()["applied"], r.json()["badRowCount"], r.json()["sequence"]) == (1, 1, 1)
    assert r.json()["badRows"] == [{"line": 2, "reason": "field 'price' is not a number"}]
    csv = gzip.compress(b"sku,name\n1,Red Shoe v3\n6,Scarf\n")
    full = client.post(
        "/catalog/import", params=Q | {"reconciliation": "full", "format": "csv"}, content=csv,
        headers={"Content-Type": "application/octet-stream"},
    )  # fmt: skip
    assert full.status_code == 200 and (full.json()["applied"], full.json()["deleted"]) == (2, 2), full.text
    assert client.get("/products/2", params=Q).status_code == 404
    refused = client.post("/catalog/import", params=Q, content=b"x", headers={"Content-Type": "image/png"})
    assert refused.status_code == 415
    empty = client.post("/catalog/import", params=Q, content=b"sku\n", headers={"Content-Type": "text/csv"})
    assert empty.status_code == 400 and empty.json()["error"]["code"] == "catalog_empty"


def test_a_bucket_outage_answers_503_and_acknowledges_nothing(s3: S3Server, tmp_path: Path) -> None:
    settings = s3.settings(tmp_path / "data", catalog_compact_seconds=0)
    shop(open_blob_store_from_settings(settings), tmp_path)
    with TestClient(create_app(settings, preload=False)) as client:
        assert client.patch("/products/1", params=Q, json={"price": 30}).status_code == 200
        s3.stop()
        r = client.patch("/products/1", params=Q, json={"price": 1})
        assert r.status_code == 503 and r.json()["error"]["code"] == "storage_unavailable"
        assert int(r.headers["Retry-After"]) >= 1
        s3.start()
        got = client.get("/products/1", params=Q).json()
        assert got["product"]["price"] == 30.0 and got["sequence"] == 1
