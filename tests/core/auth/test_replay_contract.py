"""One contract suite for every JtiStore: in-process memory and real Redis."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterator

import pytest
import redis

from aisle.core.auth.replay import JtiStore
from aisle.core.auth.replay_memory import MemoryJtiStore
from aisle.core.auth.replay_redis import RedisJtiStore
from aisle.core.auth.replay_resolver import open_jti_store


@pytest.fixture(params=["memory", "redis"])
def jti_store(request: pytest.FixtureRequest) -> Iterator[JtiStore]:
    if request.param == "memory":
        yield MemoryJtiStore()
        return
    url = request.getfixturevalue("redis_url")
    prefix = f"test:jti:{secrets.token_hex(4)}:"
    store = RedisJtiStore(redis.Redis.from_url(url), prefix=prefix)
    yield store
    for key in store.client.scan_iter(f"{prefix}*"):
        store.client.delete(key)


def test_first_use_then_replay(jti_store: JtiStore) -> None:
    exp = time.time() + 60
    assert jti_store.first_use("c1:a", exp) is True
    assert jti_store.first_use("c1:a", exp) is False
    assert jti_store.first_use("c1:b", exp) is True
    assert jti_store.first_use("c2:a", exp) is True  # keys are per client


def test_forgotten_after_expiry(jti_store: JtiStore) -> None:
    assert jti_store.first_use("k", time.time() + 0.2) is True
    assert jti_store.first_use("k", time.time() + 0.2) is False
    time.sleep(0.35)
    assert jti_store.first_use("k", time.time() + 60) is True


def test_concurrent_first_use_admits_exactly_one(jti_store: JtiStore) -> None:
    results: list[bool] = []
    lock = threading.Lock()
    barrier = threading.Barrier(8)

    def attempt() -> None:
        barrier.wait()
        ok = jti_store.first_use("race", time.time() + 60)
        with lock:
            results.append(ok)

    threads = [threading.Thread(target=attempt) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(True) == 1


def test_open_jti_store_picks_backend_by_url(redis_url: str) -> None:
    assert isinstance(open_jti_store(None), MemoryJtiStore)
    assert isinstance(open_jti_store(redis_url), RedisJtiStore)


def test_memory_store_refuses_beyond_capacity() -> None:
    store = MemoryJtiStore(max_keys=2)
    exp = time.time() + 60
    assert store.first_use("a", exp) and store.first_use("b", exp)
    assert store.first_use("c", exp) is False
