"""Redis killed mid-load and started again: the edit and predict services under a real outage.

A ``redis-server`` of the test's own (free port, temp dir, ``appendonly yes`` + ``appendfsync always``)
backs the event store of an edit and a predict service, each under uvicorn on 127.0.0.1. While one
thread posts events and another asks for personalised recommendations, Redis is killed with SIGKILL,
left down, then started again on the same port and directory. Nothing is simulated but the crash.

What must hold: ``POST /events`` is 202 or 503 ``event_store_unavailable`` with ``Retry-After``, never a
500 nor a hang; every event acknowledged with 202 is readable afterwards; predict keeps answering 200,
not personalised while Redis is down and saying so in ``Aisle-Degraded``; both recover with no restart.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import polars as pl
import pytest
from tests.conftest import require
from tests.support.auth import serve
from tests.support.faults import REDIS_SERVER, EventPoster, Load, Phase, RedisServer, tally
from tests.support.recs import CooccurrenceRecommender, write_shop

from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.recs.serving import RegistryModelSource

pytestmark = pytest.mark.slow  # starts a Redis server and the services as processes

T = {"tenant": "shop"}
PRODUCTS = pl.DataFrame(
    {
        "id": [f"p{i}" for i in range(8)],
        "title": [f"Product {i}" for i in range(8)],
        "brand": ["nike", "puma"] * 4,
        "category": ["shoes"] * 4 + ["bags"] * 4,
    }
)
SESSIONS = [["p0", "p1"], ["p0", "p2"], ["p2", "p5"], ["p5", "p6"], ["p6", "p7"]]
VISITORS = 100  # events spread so no visitor reaches the store's cap of 200
TIMEOUT_S = 5.0  # a request slower than this is a hang


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    require(REDIS_SERVER is not None, "redis-server binary not found")
    server = RedisServer(tmp_path / "redis")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def services(tmp_path: Path, redis_server: RedisServer) -> Iterator[tuple[str, str]]:
    """(edit URL, predict URL) on one bucket with tenant ``shop`` and events in ``redis_server``."""
    from aisle.services.edit.app import create_app as edit_app
    from aisle.services.predict.app import create_app as predict_app

    settings = Settings(
        auth="off",
        storage_url=f"file://{tmp_path / 'bucket'}",
        data_dir=tmp_path / "data",
        redis_url=redis_server.url,
    )
    write_shop(open_blob_store(settings.storage_url), "shop", PRODUCTS, ["view", "cart", "purchase"])
    model = CooccurrenceRecommender(SESSIONS)
    edit = edit_app(settings, loader=lambda scope, record: model, job_poll_s=0.2)
    predict = predict_app(settings, models=RegistryModelSource(lambda scope, record: model))
    with serve(edit) as edit_url, serve(predict) as predict_url:
        yield edit_url, predict_url


def test_redis_killed_mid_load_loses_no_acknowledged_event(
    services: tuple[str, str], redis_server: RedisServer
) -> None:
    edit_url, predict_url = services
    edit = httpx.Client(base_url=edit_url, timeout=TIMEOUT_S)
    predict = httpx.Client(base_url=predict_url, timeout=TIMEOUT_S)
    phase = Phase()
    events = EventPoster(edit, "shop", VISITORS)

    anonymous = predict.post("/predict", params=T, json={"containerId": "c1", "productIds": ["p0"]})
    assert anonymous.status_code == 200 and "Aisle-Degraded" not in anonymous.headers
    anonymous_ids = [i["id"] for i in anonymous.json()["response_data"]]
    personalised_body = {"containerId": "c1", "productIds": ["p0"], "visitorId": "v1"}
    degraded_items: list[list[str]] = []

    def ask_predict() -> tuple[int, bool]:
        r = predict.post("/predict", params=T, json=personalised_body)
        degraded = "Aisle-Degraded" in r.headers
        if degraded:
            assert r.headers["Aisle-Degraded"] == "personalization;reason=event_store_unavailable"
            degraded_items.append([i["id"] for i in r.json()["response_data"]])
        return r.status_code, degraded

    writes = Load(events, phase, max_requests=VISITORS * 150).start()
    reads = Load(ask_predict, phase).start()
    time.sleep(1.0)
    phase.set("during")
    redis_server.kill()  # mid-load: requests are in flight
    time.sleep(1.5)
    down = {
        "events": edit.get("/events", params={**T, "visitorId": "v1"}),
        "user_features": edit.post("/user_features", params=T, json={"userId": "u1", "features": {}}),
    }
    redis_server.start()  # same port, same directory: the append-only file is read back
    phase.set("after")
    recovered = time.monotonic()
    time.sleep(2.5)
    writes.stop()
    reads.stop()

    print("\n" + tally("redis outage, POST /events", writes))
    print(tally("redis outage, POST /predict", reads))

    # POST /events: acknowledged or refused with the code, never a 500, never a hang
    statuses = {a.status for a in writes.answers}
    assert statuses <= {202, 503}, writes.by_phase()
    assert writes.by_phase()["during"][503] > 0
    for r in events.refusals:
        assert r.json()["error"]["code"] == "event_store_unavailable"
        assert int(r.headers["Retry-After"]) >= 1
    for name, r in down.items():
        assert r.status_code == 503, (name, r.text)
        assert r.json()["error"]["code"] == "event_store_unavailable" and "Retry-After" in r.headers
    # recovered without a restart: everything after the first half second back is acknowledged
    late = [a for a in writes.answers if a.started > recovered + 0.5]
    assert late and all(a.status == 202 for a in late)

    # every acknowledged event is readable afterwards
    lost = events.lost()
    print(f"redis outage: {len(events.acked)} events acknowledged, {len(lost)} lost")
    assert not lost

    # predict: always 200; anonymous answers, flagged, while Redis is down; personalised again after
    assert {a.status for a in reads.answers} == {200}, reads.by_phase()
    assert any(a.degraded for a in reads.answers if a.phase == "during")
    assert degraded_items and all(items == anonymous_ids for items in degraded_items)
    settled = [a for a in reads.answers if a.started > recovered + 1.5]
    assert settled and not any(a.degraded for a in settled)
