"""The S3-compatible server stopped and started again under load: rules, edit and search on real HTTP.

Object storage is moto's S3 server (``ThreadedMotoServer``) on 127.0.0.1; the rules, edit and search
services run under uvicorn on it. While threads replace a rule and a container, import new catalog
versions (as ``aisle catalog import`` does) and read all three back through the services, the S3
server is stopped, left down, then started again on the same port.

What is simulated, honestly: moto keeps its objects in this process's memory, not on disk, so the
"restart" is a new server thread on the same port over the same in-process backend: the objects
survive as they would on a real server's disk. While it is down its port refuses connections, which is
what clients see of a crashed or restarting server (a server that hangs is bounded by
``AISLE_STORAGE_TIMEOUT_SECONDS`` instead, not tested here).

What must hold: every answer is a 2xx, a 409 (a write whose 503 hid that it landed, retried with the
old version) or a 503 ``storage_unavailable`` with ``Retry-After``, never a 500 nor a hang; every rule,
container and catalog served is one complete version; nothing acknowledged is lost; the services
recover with no restart.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import polars as pl
import pytest
from tests.support.auth import serve
from tests.support.faults import Load, Phase, S3Server, VersionedWriter, tally
from tests.support.recs import CooccurrenceRecommender, register_and_deploy, write_tenant

from aisle.catalog.store import CatalogStore
from aisle.core.config import Settings
from aisle.core.errors import StorageUnavailable
from aisle.core.storage.resolver import open_blob_store_from_settings
from aisle.core.tenancy import Tenants
from aisle.recs.containers import ContainerBody, ContainerStore
from aisle.recs.models.base import ModelType

pytestmark = pytest.mark.slow  # starts the services as processes against an S3 server it stops

T = {"tenant": "shop"}
TIMEOUT_S = 10.0  # a request slower than this is a hang (storage operations are bounded to 2 s)
SLOT = {"slotConfigId": "main", "modelId": "m1", "itemCount": 4}
ALLOWED = {200, 201, 204, 409, 503}


def products(generation: int) -> pl.DataFrame:
    """8 products whose titles all name ``generation``: a mixed page would show a half-written catalog."""
    return pl.DataFrame(
        {
            "id": [f"p{i}" for i in range(8)],
            "title": [f"Product {i} gen {generation}" for i in range(8)],
            "brand": ["nike", "puma"] * 4,
            "category": ["shoes"] * 4 + ["bags"] * 4,
        }
    )


def rule(generation: int, version: int | None = None) -> dict[str, Any]:
    body = {
        "name": f"gen {generation}",
        "description": f"generation {generation}",
        "conditions": {"query": {"match": "contains", "value": "shoes"}},
        "actions": [{"type": "hide", "productIds": ["p1"]}],
    }
    return body if version is None else {**body, "version": version}


@dataclass
class Services:
    settings: Settings
    rules: httpx.Client
    edit: httpx.Client
    search: httpx.Client


@pytest.fixture
def services(tmp_path: Path, s3: S3Server) -> Iterator[Services]:
    from aisle.services.edit.app import create_app as edit_app
    from aisle.services.rules.app import create_app as rules_app
    from aisle.services.search.app import create_app as search_app

    settings = s3.settings(tmp_path / "data", predict_url="http://127.0.0.1:9")
    store = open_blob_store_from_settings(settings)
    write_tenant(store, "shop", products(0))
    register_and_deploy(store, "shop", "m1", ModelType.CUSTOMERS_ALSO_VIEW)
    ContainerStore(Tenants(store).scope("shop")).create(
        "c1",
        ContainerBody.model_validate(
            {"name": "gen 0", "description": "generation 0", "slotConfigurations": [SLOT]}
        ),
    )
    model = CooccurrenceRecommender([["p0", "p1"]])
    apps = (
        rules_app(settings),
        edit_app(settings, loader=lambda scope, record: model, job_poll_s=0.5),
        search_app(settings, preload=False),
    )
    with serve(apps[0]) as rules_url, serve(apps[1]) as edit_url, serve(apps[2]) as search_url:
        clients = [httpx.Client(base_url=u, timeout=TIMEOUT_S) for u in (rules_url, edit_url, search_url)]
        assert clients[0].post("/rules", params=T, json={**rule(0), "id": "r1"}).status_code == 201
        yield Services(settings, *clients)


def complete(doc: dict[str, Any]) -> bool:
    """A rule or container whose two generation-bearing fields agree."""
    return doc["description"] == "generation " + doc["name"].removeprefix("gen ")


def test_s3_stopped_and_restarted_under_load(services: Services, s3: S3Server) -> None:
    phase = Phase()
    rules = VersionedWriter(services.rules, "/rules/r1", "shop", rule)
    containers = VersionedWriter(
        services.edit,
        "/containers/c1",
        "shop",
        lambda g, v: {
            "version": v,
            "name": f"gen {g}",
            "description": f"generation {g}",
            "slotConfigurations": [SLOT],
        },
    )
    catalogs = CatalogStore(Tenants(open_blob_store_from_settings(services.settings)).scope("shop"))
    imported = itertools.count(1)
    last_import = [0]
    import_lock = threading.Lock()
    broken: list[str] = []  # every incomplete document served

    def import_catalog() -> tuple[int, bool]:
        generation = next(imported)
        time.sleep(0.1)  # an import every ~0.1 s: each new version makes search build an index
        try:
            catalogs.write(products(generation), source="outage test")
        except StorageUnavailable:
            return 503, False
        with import_lock:
            last_import[0] = generation
        return 200, False

    reads = itertools.cycle(["rule", "container", "items"])

    def read() -> tuple[int, bool]:
        what = next(reads)
        if what == "items":
            r = services.search.get("/items", params={**T, "size": 100})
            if r.status_code == 200:
                titles = {i["title"].split(" gen ")[1] for i in r.json()["items"]}
                if r.json()["total"] != 8 or len(titles) != 1:
                    broken.append(f"catalog: {r.text[:300]}")
        else:
            client, path = (
                (services.rules, "/rules/r1") if what == "rule" else (services.edit, "/containers/c1")
            )
            r = client.get(path, params=T)
            if r.status_code == 200 and not complete(r.json()):
                broken.append(f"{what}: {r.text[:300]}")
        if r.status_code == 503:
            assert r.json()["error"]["code"] == "storage_unavailable", r.text
            assert int(r.headers["Retry-After"]) >= 1
        return r.status_code, False

    loads = {
        "PUT /rules/r1": Load(rules, phase, max_requests=5000).start(),
        "PUT /containers/c1": Load(containers, phase, max_requests=5000).start(),
        "catalog import": Load(import_catalog, phase, max_requests=200).start(),
        "GET rule, container, /items": Load(read, phase, max_requests=10_000).start(),
    }
    time.sleep(1.5)
    phase.set("during")  # from the moment the stop begins (moto's takes up to 0.5 s)
    s3.stop()
    time.sleep(2.0)
    s3.start()  # the same port, the same (in-process) objects
    phase.set("after")
    recovered = time.monotonic()
    time.sleep(3.0)
    for load in loads.values():
        load.stop()

    print()
    for name, load in loads.items():
        print(tally(f"S3 outage, {name}", load))

    for name, load in loads.items():
        statuses = {a.status for a in load.answers}
        assert statuses <= ALLOWED, (name, load.by_phase())
        assert load.by_phase().get("during", {}).get(503, 0) > 0, (name, load.by_phase())
        late = [a for a in load.answers if a.started > recovered + 1.0]
        assert late and all(a.status in (200, 201, 204) for a in late), (name, [a.status for a in late])
    for writer in (rules, containers):
        for r in writer.refusals:
            assert r.json()["error"]["code"] == "storage_unavailable" and "Retry-After" in r.headers
    assert not broken, broken[:5]

    # nothing acknowledged is lost: each document is at (or, for a write answered 503, past) its last 200
    catalog_now = catalogs.load()
    lost = {
        "rule": rules.lost(),
        "container": containers.lost(),
        "catalog": int(catalog_now.products["title"][0].split(" gen ")[1]) < last_import[0],
    }
    print(f"S3 outage: acknowledged writes lost: {sum(lost.values())} ({lost})")
    assert not any(lost.values())
    rule_now = services.rules.get("/rules/r1", params=T).json()
    container_now = services.edit.get("/containers/c1", params=T).json()
    assert complete(rule_now) and complete(container_now) and catalog_now.count == 8
