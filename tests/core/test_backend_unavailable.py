"""Object storage and Redis that do not answer: one error each, 503 with Retry-After, within a bound.

Real clients (obstore's S3 client, redis-py) against a loopback port where nothing listens (a crashed
server) or where connections are taken and never answered (a hung one). The bound is checked through
its mechanism, not a stopwatch: the client carries the configured timeouts, and a hung server's error
comes from the timeout path (obstore's retry error names its kind and ``retry_timeout``; redis-py
raises ``TimeoutError``), so no wait can outlast them. The outages under load, with real servers killed
and restarted: ``tests/services/test_storage_outage.py`` and ``tests/services/edit/test_redis_outage.py``.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from tests.support.auth import free_port

from aisle.core.errors import AisleError, EventStoreUnavailable, StorageUnavailable
from aisle.core.events import Event, open_event_store_url
from aisle.core.events.store_redis import RedisEventStore
from aisle.core.redis_connection import CONNECT_TIMEOUT_S, SOCKET_TIMEOUT_S
from aisle.core.storage import open_blob_store
from aisle.core.storage.revisions import RevisionLog


def fails_with_503(call: Callable[[], Any], error: type[AisleError], code: str) -> BaseException | None:
    """Run ``call``, expecting ``error`` as a 503 with ``Retry-After``; returns the backend's cause."""
    with pytest.raises(error) as caught:
        call()
    assert caught.value.status == 503 and caught.value.code == code
    assert caught.value.headers is not None and int(caught.value.headers["Retry-After"]) >= 1
    return caught.value.__cause__


def assert_s3_bounded(store: Any, timeout_s: float) -> None:
    """The S3 client carries the bound: each attempt and the retries together within ``timeout_s``."""
    s3 = store.store
    assert s3.client_options["timeout"] == f"{round(timeout_s * 1000)}ms"
    assert s3.retry_config["retry_timeout"] == timedelta(seconds=timeout_s)
    assert s3.retry_config["max_retries"] == 2


def assert_redis_bounded(store: Any) -> None:
    """The Redis client carries the bound: a reply within the socket timeout, no retry after one."""
    assert isinstance(store, RedisEventStore)
    options = store.client.connection_pool.connection_kwargs
    assert options["socket_timeout"] == SOCKET_TIMEOUT_S
    assert options["socket_connect_timeout"] == CONNECT_TIMEOUT_S
    assert options["retry_on_timeout"] is False


def test_every_storage_operation_on_a_dead_s3_server_is_storage_unavailable() -> None:
    store = open_blob_store(
        "s3://bucket",
        s3_endpoint=f"http://127.0.0.1:{free_port()}",
        s3_access_key_id="test",
        s3_secret_access_key="test",
        timeout_s=1.0,
    )
    assert_s3_bounded(store, 1.0)
    for call in (
        lambda: store.get("a/b.json"),
        lambda: store.put("a/b.json", b"{}"),
        lambda: store.put_if_absent("a/b.json", b"{}"),
        lambda: store.exists("a/b.json"),
        lambda: store.delete("a/b.json"),
        lambda: list(store.list("a")),
        lambda: store.list_dirs("a"),
    ):
        fails_with_503(call, StorageUnavailable, "storage_unavailable")


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
    assert_redis_bounded(store)
    event = Event("v1", "view", "p1", 1_700_000_000.0)
    for call in (
        lambda: store.append("shop", [event]),
        lambda: store.recent("shop", "v1"),
        lambda: store.put_user_features("shop", "u1", {"a": 1}),
        lambda: store.user_features("shop", "u1"),
        lambda: store.clear("shop"),
    ):
        cause = fails_with_503(call, EventStoreUnavailable, "event_store_unavailable")
        assert isinstance(cause, redis.ConnectionError)  # refused at once, not waited for


def test_a_local_disk_error_is_storage_unavailable_too(tmp_path: Path) -> None:
    """Revisions on a local store are read with plain file IO: an OS error there is the same 503."""
    store = open_blob_store(f"file://{tmp_path}")
    (tmp_path / "rules" / "r1" / "head.json").mkdir(parents=True)  # unreadable as a file
    log = RevisionLog(store, "rules")
    cause = fails_with_503(lambda: log.read("rules/r1/head.json"), StorageUnavailable, "storage_unavailable")
    assert isinstance(cause, OSError)


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
    assert_s3_bounded(store, 1.0)
    for call in (lambda: store.get("a/b.json"), lambda: store.put_if_absent("a/b.json", b"{}")):
        cause = fails_with_503(call, StorageUnavailable, "storage_unavailable")
        # the timeout path: the attempt timed out and the retries stopped at the configured budget
        assert "kind: Timeout" in str(cause) and "retry_timeout: 1s" in str(cause), str(cause)[:2000]


def test_a_hung_redis_costs_the_socket_timeout(silent_port: int) -> None:
    store = open_event_store_url(f"redis://127.0.0.1:{silent_port}/0")
    assert_redis_bounded(store)
    cause = fails_with_503(
        lambda: store.recent("shop", "v1"), EventStoreUnavailable, "event_store_unavailable"
    )
    assert isinstance(cause, redis.TimeoutError)  # the socket timeout ended the wait
