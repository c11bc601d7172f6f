"""Object storage and Redis that do not answer: one error each, 503 with Retry-After, within a bound.

Real clients (obstore's S3 client, redis-py) against a loopback port where nothing listens (a crashed
server) or where connections are taken and never answered (a hung one). The outages under load, with
real servers killed and restarted: ``tests/services/test_storage_outage.py`` and
``tests/services/edit/test_redis_outage.py``.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.auth import free_port

from aisle.core.errors import AisleError, EventStoreUnavailable, StorageUnavailable
from aisle.core.events import Event, open_event_store_url
from aisle.core.storage import open_blob_store
from aisle.core.storage.revisions import RevisionLog

BOUND_S = 3.5  # a refused connection fails in ms, a hung server after the 1 s (S3) or 2 s (Redis) timeout


def fails_fast(call: Callable[[], Any], error: type[AisleError], code: str) -> None:
    started = time.monotonic()
    with pytest.raises(error) as caught:
        call()
    assert time.monotonic() - started < BOUND_S
    assert caught.value.status == 503 and caught.value.code == code
    assert caught.value.headers is not None and int(caught.value.headers["Retry-After"]) >= 1


def test_every_storage_operation_on_a_dead_s3_server_is_storage_unavailable() -> None:
    store = open_blob_store(
        "s3://bucket",
        s3_endpoint=f"http://127.0.0.1:{free_port()}",
        s3_access_key_id="test",
        s3_secret_access_key="test",
        timeout_s=1.0,
    )
    for call in (
        lambda: store.get("a/b.json"),
        lambda: store.put("a/b.json", b"{}"),
        lambda: store.put_if_absent("a/b.json", b"{}"),
        lambda: store.exists("a/b.json"),
        lambda: store.delete("a/b.json"),
        lambda: list(store.list("a")),
        lambda: store.list_dirs("a"),
    ):
        fails_fast(call, StorageUnavailable, "storage_unavailable")


def test_the_error_names_the_operation_but_not_the_server() -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"
    store = open_blob_store(
        "s3://bucket", s3_endpoint=endpoint, s3_access_key_id="t", s3_secret_access_key="t"
    )
    with pytest.raises(StorageUnavailable) as caught:
        store.get("shop/rules/r1/head.json")
    assert caught.value.details == {"operation": "read", "path": "shop/rules/r1/head.json"}
    assert endpoint not in caught.value.message


def test_every_event_store_operation_on_a_dead_redis_is_event_store_unavailable() -> None:
    store = open_event_store_url(f"redis://127.0.0.1:{free_port()}/0")
    event = Event("v1", "view", "p1", 1_700_000_000.0)
    for call in (
        lambda: store.append("shop", [event]),
        lambda: store.recent("shop", "v1"),
        lambda: store.put_user_features("shop", "u1", {"a": 1}),
        lambda: store.user_features("shop", "u1"),
        lambda: store.clear("shop"),
    ):
        fails_fast(call, EventStoreUnavailable, "event_store_unavailable")


def test_a_local_disk_error_is_storage_unavailable_too(tmp_path: Path) -> None:
    """Revisions on a local store are read with plain file IO: an OS error there is the same 503."""
    store = open_blob_store(f"file://{tmp_path}")
    (tmp_path / "rules" / "r1" / "head.json").mkdir(parents=True)  # unreadable as a file
    log = RevisionLog(store, "rules")
    fails_fast(lambda: log.read("rules/r1/head.json"), StorageUnavailable, "storage_unavailable")


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A loopback port that takes connections (kernel backlog) and never answers: a hung server."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        yield int(sock.getsockname()[1])


def test_a_hung_s3_server_costs_the_storage_timeout_not_minutes(silent_port: int) -> None:
    store = open_blob_store(
        "s3://bucket",
        s3_endpoint=f"http://127.0.0.1:{silent_port}",
        s3_access_key_id="test",
        s3_secret_access_key="test",
        timeout_s=1.0,
    )
    fails_fast(lambda: store.get("a/b.json"), StorageUnavailable, "storage_unavailable")
    fails_fast(lambda: store.put_if_absent("a/b.json", b"{}"), StorageUnavailable, "storage_unavailable")


def test_a_hung_redis_costs_the_socket_timeout(silent_port: int) -> None:
    store = open_event_store_url(f"redis://127.0.0.1:{silent_port}/0")
    fails_fast(lambda: store.recent("shop", "v1"), EventStoreUnavailable, "event_store_unavailable")
