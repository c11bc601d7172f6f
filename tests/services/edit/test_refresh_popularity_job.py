"""The edit service's ``refresh_popularity`` job: the tenant's logged shopper events become the next
version of its popularity artifact (hand-made events, written to the analytics log as the outbox would)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from fastapi.testclient import TestClient
from tests.support.jobs import finished_job
from tests.support.recs import write_tenant

from aisle.analytics.log import ParquetLog
from aisle.analytics.records import Outcome
from aisle.core.config import Settings
from aisle.core.storage import BlobStore, open_blob_store
from aisle.core.tenancy import Tenants
from aisle.recs import popularity_store
from aisle.services.edit.app import create_app

PRODUCTS = pl.DataFrame({"id": ["a", "b", "c"], "title": ["A", "B", "C"]})


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(auth="off", storage_url=f"file://{tmp_path / 'bucket'}", data_dir=tmp_path / "data")


@pytest.fixture
def store(settings: Settings, tmp_path: Path) -> BlobStore:
    store = open_blob_store(settings.storage_url)
    write_tenant(store, "shop", PRODUCTS)
    now = time.time() - 60
    day = 86400.0
    events = [
        Outcome("shop", "e1", "view", now - 40 * day, "v1", "a"),
        Outcome("shop", "e2", "view", now - 40 * day, "v2", "a"),
        Outcome("shop", "e3", "purchase", now - 2 * day, "v1", "b"),
        Outcome("shop", "e3", "purchase", now - 2 * day, "v1", "b"),  # a retried event id counts once
        Outcome("shop", "e4", "view", now, "v3", "c"),
        Outcome("shop", "e5", "view", now - 200 * day, "v3", "c"),  # older than the 90 days
    ]
    ParquetLog(store, tmp_path / "cache").write(events)
    return store


@pytest.fixture
def client(settings: Settings, store: BlobStore) -> Iterator[TestClient]:
    with TestClient(create_app(settings, job_poll_s=0.05)) as c:
        yield c


def test_refresh_publishes_the_next_version_from_the_logged_events(
    client: TestClient, store: BlobStore
) -> None:
    resp = client.post("/popularity/refresh", params={"tenant": "shop"})
    assert resp.status_code == 202 and resp.json()["kind"] == "refresh_popularity", resp.text
    job = finished_job(client, "shop", resp.json()["jobId"])
    assert job["status"] == "completed", job
    assert job["result"]["popularityVersion"] == 1 and job["result"]["events"] == 4
    scope = Tenants(store).scope("shop")
    items = popularity_store.read_table(scope, 1)
    # 30 days before the newest event: b one purchase (5), c one view (1); a's views are 40 days old
    assert items["item_id"].to_list() == ["b", "c", "a"]
    windows = popularity_store.read_table(scope, 1, "windows").filter(pl.col("window_days") == 90.0)
    assert dict(zip(windows["item_id"], windows["purchases"], strict=True)) == {"a": 0, "b": 1, "c": 0}
    again = finished_job(
        client, "shop", client.post("/popularity/refresh", params={"tenant": "shop"}).json()["jobId"]
    )
    assert again["result"]["popularityVersion"] == 2 and popularity_store.current_version(scope) == 2


def test_refresh_of_an_unknown_tenant_is_404(client: TestClient) -> None:
    resp = client.post("/popularity/refresh", params={"tenant": "nope"})
    assert resp.status_code == 404 and resp.json()["error"]["code"] == "tenant_not_found"
