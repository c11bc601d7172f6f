"""Vector writes through the bucket, over HTTP: acknowledged once in the bucket, served by another
process on the same bucket, and a bucket outage answers 503 ``storage_unavailable`` and leaves nothing
half written (moto's S3 server, stopped and started again). The two-replica run under uvicorn is
``tests/deploy/test_replicas.py``."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from tests.support.faults import S3Server

from aisle.catalog.datasets import fashion
from aisle.core.config import Settings
from aisle.core.errors import StorageUnavailable
from aisle.core.storage.resolver import open_blob_store_from_settings
from aisle.core.tenancy import Tenants
from aisle.services.vectors.app import create_app
from aisle.vectors.published import publish_table
from aisle.vectors.store import VectorStore
from aisle.vectors.table import table_dir, write_table

pytestmark = pytest.mark.slow  # starts the vector service as processes

TENANT = "vwrites"
DIM = 8
N = 12


def unit(seed: int) -> list[float]:
    v = np.random.default_rng(seed).standard_normal(DIM)
    return (v / np.linalg.norm(v)).tolist()


def seeded(s3: S3Server, tmp_path: Path) -> tuple[Settings, Settings]:
    """Settings of two processes (own data dirs) on one new bucket holding the tenant and its table."""
    first = s3.settings(tmp_path / "a", vectors_check_seconds=0)
    second = first.model_copy(update={"data_dir": tmp_path / "b"})
    tenants = Tenants(open_blob_store_from_settings(first), ttl=0)
    tenants.write_config(TENANT, fashion.configs())
    vectors = np.asarray([unit(i) for i in range(N)], dtype=np.float32)
    path = table_dir(tmp_path / "builder", TENANT, "text", "v1", "r")
    write_table(path, "v1", [f"p{i}" for i in range(N)], vectors, np.zeros(N))
    publish_table(tenants.scope(TENANT), "text", path)
    return first, second


def top(client: TestClient, vector: list[float]) -> str | None:
    r = client.post("/vectors/search", params={"tenant": TENANT}, json={"vector": vector, "k": 1})
    assert r.status_code == 200, r.text
    found = r.json()["neighbours"]
    return found[0]["id"] if found else None


def settles(client: TestClient, vector: list[float], served: Callable[[str | None], bool]) -> bool:
    """Whether ``client``'s top answer for ``vector`` satisfies ``served`` within 10 s. Another process
    reads the bucket's log when a request checks, but a request arriving while the catalog embedder's
    thread holds the table's check serves the table loaded (``VectorStore.table``): not at once."""
    deadline = time.monotonic() + 10
    while not served(top(client, vector)):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_write_is_served_by_another_process_and_an_outage_writes_nothing(
    s3: S3Server, tmp_path: Path
) -> None:
    first, second = seeded(s3, tmp_path)
    t = {"tenant": TENANT}
    with TestClient(create_app(first)) as a, TestClient(create_app(second)) as b:
        put = a.put("/vectors", params=t, json={"items": [{"id": "x", "vector": unit(100)}]})
        assert put.status_code == 200 and put.json()["count"] == 1 and put.json()["total"] == N + 1
        assert top(a, unit(100)) == "x"  # the writer serves its write at once
        assert settles(b, unit(100), lambda found: found == "x")
        bad = a.put("/vectors", params=t, json={"items": [{"id": "z", "vector": [0.0] * DIM}]})
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "vector_invalid"  # validated first

        s3.stop()
        put = a.put("/vectors", params=t, json={"items": [{"id": "y", "vector": unit(101)}]})
        gone = a.request("DELETE", "/vectors", params=t, json={"ids": ["x"]})
        for r in (put, gone):
            assert r.status_code == 503 and r.json()["error"]["code"] == "storage_unavailable", r.text
            assert int(r.headers["Retry-After"]) >= 1
        s3.start()

        for client in (a, b):  # neither the refused upsert nor the refused delete is served anywhere
            assert top(client, unit(101)) != "y" and top(client, unit(100)) == "x"
        gone = b.request("DELETE", "/vectors", params=t, json={"ids": ["x", "never"]})
        assert gone.status_code == 200 and gone.json()["count"] == 1 and gone.json()["total"] == N
        assert settles(a, unit(100), lambda found: found != "x")


def test_the_store_raises_storage_unavailable_and_applies_nothing_when_the_log_cannot_be_written(
    s3: S3Server, tmp_path: Path
) -> None:
    first, _ = seeded(s3, tmp_path)
    bucket = open_blob_store_from_settings(first)
    store = VectorStore(tmp_path / "store", check_every=3600, bucket=bucket)
    table = store.table(TENANT)
    s3.stop()
    with pytest.raises(StorageUnavailable) as caught:
        store.upsert(TENANT, ["y"], np.asarray([unit(101)], dtype=np.float32))
    assert caught.value.status == 503 and caught.value.headers and "Retry-After" in caught.value.headers
    with pytest.raises(StorageUnavailable):
        store.delete(TENANT, ["p1"])
    assert "y" not in table.key_of and "p1" in table.key_of and len(table) == N
    s3.start()
    assert "y" not in VectorStore(tmp_path / "later", check_every=0, bucket=bucket).table(TENANT).key_of
