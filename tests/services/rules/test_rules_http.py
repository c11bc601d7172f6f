"""Over real HTTP (uvicorn on loopback): twenty clients replacing one rule at once lose no update."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import orjson
from tests.support.auth import serve

from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.core.storage.revisions import RevisionLog
from aisle.core.tenancy import tenant_scope
from aisle.services.rules.app import create_app

T = {"tenant": "fashion"}
WRITERS = 20


def body(name: str, version: int | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "name": name,
        "conditions": {"query": {"match": "exact", "value": name}},
        "actions": [{"type": "redirect", "url": f"/{name}"}],
    }
    if version is not None:
        doc["version"] = version
    return doc


def test_twenty_concurrent_writers_lose_no_update(settings: Settings) -> None:
    with serve(create_app(settings)) as url, httpx.Client(base_url=url, timeout=30) as client:
        assert client.post("/rules", params=T, json={**body("start"), "id": "hot"}).status_code == 201
        barrier = threading.Barrier(WRITERS)

        def stale_writer(n: int) -> int:
            barrier.wait()
            return client.put("/rules/hot", params=T, json=body(f"s{n}", version=1)).status_code

        with ThreadPoolExecutor(WRITERS) as pool:
            statuses = list(pool.map(stale_writer, range(WRITERS)))
        assert sorted(statuses) == [200] + [409] * (WRITERS - 1)  # all sent version 1: one lands
        assert client.get("/rules/hot", params=T).json()["version"] == 2

        def retrying_writer(n: int) -> tuple[int, int]:
            conflicts = 0
            barrier.wait()
            while True:
                current = client.get("/rules/hot", params=T).json()["version"]
                r = client.put("/rules/hot", params=T, json=body(f"r{n}", version=current))
                if r.status_code == 200:
                    return int(r.json()["rule"]["version"]), conflicts
                assert r.status_code == 409, r.text
                conflicts += 1

        with ThreadPoolExecutor(WRITERS) as pool:
            results = list(pool.map(retrying_writer, range(WRITERS)))
        landed = sorted(v for v, _ in results)
        assert landed == list(range(3, 3 + WRITERS))  # every write landed, each with its own version
        # each landed version holds exactly the body its writer sent: no write was overwritten
        log = RevisionLog(tenant_scope(open_blob_store(settings.storage_url), "fashion"), "rules")
        for n, (version, _) in enumerate(results):
            assert orjson.loads(log.read(log.revision_path("hot", version)))["body"]["name"] == f"r{n}"
        assert log.latest("hot")[0] == 2 + WRITERS
        assert sum(c for _, c in results) > 0  # the writers did collide
