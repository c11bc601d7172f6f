"""Faults under load: Redis killed and restarted, the S3 server stopped and restarted (issue 16's figures).

Prints, per scenario, the answers per fault phase (``before`` the first fault, ``during`` an outage,
``after`` it, summed over the cycles; ``after->during`` for a request in flight as the phase changed)
and status, and the acknowledged writes lost. ``during`` runs from the moment the stop begins until the
bench has seen the server answer again, so a few 2xx right after a restart count as ``during``.

* Redis: a ``redis-server`` of its own (free port, temp dir) under the edit service (uvicorn, loopback),
  ``POST /events`` from 4 threads; ``CYCLES`` times: killed with SIGKILL, left down, started again on
  the same port and directory. Run three times: with ``appendonly yes`` + ``appendfsync always`` (what
  ``docs/operations.md`` asks of production), with ``appendfsync everysec`` (a process kill only: a
  machine crash, where everysec can lose a second, is not simulated), and with no persistence.
* S3: moto's S3 server under the rules service, a rule replaced by 2 threads and read by one; ``CYCLES``
  times stopped and started again on the same port (moto's objects live in memory, so the restart keeps
  them as a real server's disk would: simulated).

The tiny tenant is built here; ``data_dir`` (the shared data) is not needed. Skips the Redis part when
``redis-server`` is not installed.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import polars as pl
from tests.support.auth import serve
from tests.support.faults import (
    REDIS_SERVER,
    EventPoster,
    Load,
    Phase,
    RedisServer,
    S3Server,
    VersionedWriter,
    tally,
)
from tests.support.recs import CooccurrenceRecommender, write_tenant

from aisle.core.config import Settings
from aisle.core.storage.resolver import open_blob_store_from_settings

CYCLES = 3
UP_S, DOWN_S = 1.5, 1.5
THREADS = 4
VISITORS = 200  # the store keeps 200 events per visitor: the load stays far below 200 * 200
PRODUCTS = pl.DataFrame(
    {"id": [f"p{i}" for i in range(8)], "title": [f"Product {i}" for i in range(8)], "brand": ["a", "b"] * 4}
)


def cycles(phase: Phase, stop: Callable[[], None], start: Callable[[], None]) -> None:
    """``CYCLES`` times: ``UP_S`` of load, ``stop()``, ``DOWN_S`` down, ``start()``; then ``UP_S`` more."""
    for _ in range(CYCLES):
        time.sleep(UP_S)
        phase.set("during")  # from the moment the stop begins (moto's takes up to 0.5 s)
        stop()
        time.sleep(DOWN_S)
        start()
        phase.set("after")
    time.sleep(UP_S)


@contextmanager
def loads(*made: Load) -> Iterator[list[Load]]:
    started = [load.start() for load in made]
    try:
        yield started
    finally:
        for load in started:
            load.stop()


def merged(loads_: list[Load]) -> Load:
    """One Load holding the answers of several (for one tally line)."""
    out = Load(loads_[0].request, loads_[0].phase)
    for load in loads_:
        out.answers += load.answers
    return out


def redis_scenario(tmp: Path, appendfsync: str | None) -> None:
    from aisle.services.edit.app import create_app

    server = RedisServer(tmp / "redis", appendfsync=appendfsync)
    server.start()
    settings = Settings(
        auth="off", storage_url=f"file://{tmp / 'bucket'}", data_dir=tmp / "data", redis_url=server.url
    )
    write_tenant(open_blob_store_from_settings(settings), "shop", PRODUCTS, event_types=["view"])
    app = create_app(settings, loader=lambda scope, record: CooccurrenceRecommender([]), job_poll_s=1.0)
    label = "no persistence" if appendfsync is None else f"appendonly yes, appendfsync {appendfsync}"
    with ExitStack() as stack:
        url = stack.enter_context(serve(app))
        stack.callback(server.stop)
        client = stack.enter_context(httpx.Client(base_url=url, timeout=5.0))
        poster, phase = EventPoster(client, "shop", VISITORS), Phase()
        with loads(*(Load(poster, phase, max_requests=VISITORS * 40) for _ in range(THREADS))) as running:
            cycles(phase, server.kill, server.start)
        print(tally(f"redis ({label}), POST /events", merged(running)))
        print(f"redis ({label}): {len(poster.acked)} events acknowledged, {len(poster.lost())} lost")


def s3_scenario(tmp: Path) -> None:
    from aisle.services.rules.app import create_app

    s3 = S3Server()
    s3.start()
    settings = s3.settings(tmp / "data")
    write_tenant(open_blob_store_from_settings(settings), "shop", PRODUCTS)

    def rule(generation: int, version: int | None) -> dict[str, Any]:
        body = {
            "name": f"gen {generation}",
            "conditions": {"query": {"match": "contains", "value": "shoes"}},
            "actions": [{"type": "hide", "productIds": ["p1"]}],
        }
        return body if version is None else {**body, "version": version}

    with ExitStack() as stack:
        url = stack.enter_context(serve(create_app(settings)))
        stack.callback(s3.stop)
        client = stack.enter_context(httpx.Client(base_url=url, timeout=10.0))
        created = client.post("/rules", params={"tenant": "shop"}, json={**rule(0, None), "id": "r1"})
        created.raise_for_status()
        writer, phase = VersionedWriter(client, "/rules/r1", "shop", rule), Phase()

        def read() -> tuple[int, bool]:
            return client.get("/rules/r1", params={"tenant": "shop"}).status_code, False

        with loads(Load(writer, phase), Load(read, phase)) as (writes, reads):
            cycles(phase, s3.stop, s3.start)
        print(tally("S3, PUT /rules/r1", writes))
        print(tally("S3, GET /rules/r1", reads))
        print(f"S3: last acknowledged rule generation {writer.acked}, lost: {writer.lost()}")


def main(data_dir: Path) -> None:
    logging.getLogger("aisle").setLevel(logging.ERROR)  # one warning per failed request otherwise
    print(f"{CYCLES} outages of {DOWN_S} s each, {UP_S} s of load between them")
    if REDIS_SERVER is None:
        print("redis-server not installed: Redis scenarios skipped")
    else:
        for appendfsync in ("always", "everysec", None):
            with tempfile.TemporaryDirectory() as tmp:
                redis_scenario(Path(tmp), appendfsync)
    with tempfile.TemporaryDirectory() as tmp:
        s3_scenario(Path(tmp))


if __name__ == "__main__":
    main(Path("../shared/data"))
