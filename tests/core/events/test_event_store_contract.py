"""One contract suite for every EventStore backend: embedded SQLite and a real Redis."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from aisle.core.events import Event, EventStore, open_event_store_url
from aisle.core.events.store_redis import RedisEventStore
from aisle.core.events.store_sqlite import SqliteEventStore


@pytest.fixture(params=["sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventStore]:
    if request.param == "redis":
        url = request.getfixturevalue("redis_url")
    else:
        url = f"sqlite://{tmp_path / 'events.sqlite3'}"
    s = open_event_store_url(url, cap=5, ttl_s=3600)
    yield s
    s.close()


@pytest.fixture
def tenant(store: EventStore) -> Iterator[str]:
    name = f"t{uuid.uuid4().hex[:10]}"
    yield name
    store.clear(name)


def ev(visitor: str, product: str, kind: str = "view", t: float = 1_700_000_000.0) -> Event:
    return Event(visitor_id=visitor, event_type=kind, product_id=product, timestamp=t)


def test_recent_is_newest_first_and_capped(store: EventStore, tenant: str) -> None:
    store.append(tenant, [ev("v1", f"p{i}", t=1_700_000_000 + i) for i in range(8)])
    got = store.recent(tenant, "v1")
    assert [e.product_id for e in got] == ["p7", "p6", "p5", "p4", "p3"]
    assert [e.product_id for e in store.recent(tenant, "v1", limit=2)] == ["p7", "p6"]


def test_fields_round_trip(store: EventStore, tenant: str) -> None:
    e = Event("v1", "purchase", "p9", 1_700_000_123.5, user_id="u1", session_id="s1", quantity=2, price=9.99)
    store.append(tenant, [e])
    assert store.recent(tenant, "v1") == [e]


def test_visitors_and_tenants_are_isolated(store: EventStore, tenant: str) -> None:
    other = f"{tenant}x"
    try:
        store.append(tenant, [ev("v1", "a"), ev("v2", "b")])
        store.append(other, [ev("v1", "c")])
        assert [e.product_id for e in store.recent(tenant, "v1")] == ["a"]
        assert [e.product_id for e in store.recent(tenant, "v2")] == ["b"]
        assert [e.product_id for e in store.recent(other, "v1")] == ["c"]
        assert store.recent(tenant, "nobody") == []
    finally:
        store.clear(other)


def test_separate_appends_accumulate_then_cap(store: EventStore, tenant: str) -> None:
    for i in range(7):
        store.append(tenant, [ev("v", f"p{i}")])
    assert [e.product_id for e in store.recent(tenant, "v")] == ["p6", "p5", "p4", "p3", "p2"]


def test_user_features_replace(store: EventStore, tenant: str) -> None:
    assert store.user_features(tenant, "u1") is None
    store.put_user_features(tenant, "u1", {"brand_affinity": {"Nike": 0.8}})
    store.put_user_features(tenant, "u1", {"brand_affinity": {"Puma": 0.5}})
    assert store.user_features(tenant, "u1") == {"brand_affinity": {"Puma": 0.5}}


def test_clear_forgets_the_tenant(store: EventStore, tenant: str) -> None:
    store.append(tenant, [ev("v", "p")])
    store.put_user_features(tenant, "u", {"a": 1})
    store.clear(tenant)
    assert store.recent(tenant, "v") == [] and store.user_features(tenant, "u") is None


def test_expired_events_are_invisible_sqlite(tmp_path: Path) -> None:
    """Events are visible for ``ttl_s`` seconds after receipt (the store's clock, stepped here)."""
    now = [1_700_000_000.0]
    s = SqliteEventStore(tmp_path / "e.sqlite3", cap=5, ttl_s=60, clock=lambda: now[0])
    s.append("t", [ev("v", "p")])
    now[0] += 59
    assert len(s.recent("t", "v")) == 1
    now[0] += 2
    assert s.recent("t", "v") == []
    s.close()


def test_expired_events_are_invisible_redis(redis_url: str) -> None:
    """Redis expires a visitor's list ``ttl_s`` seconds after its last write: the test waits for the
    server's own ``expired`` keyspace event for that list, then reads nothing."""
    s = open_event_store_url(redis_url, cap=5, ttl_s=1)
    assert isinstance(s, RedisEventStore)
    t = f"t{uuid.uuid4().hex[:10]}"
    db = s.client.connection_pool.connection_kwargs.get("db", 0)
    s.client.config_set("notify-keyspace-events", "Ex")
    events = s.client.pubsub()
    events.subscribe(f"__keyevent@{db}__:expired")
    try:
        s.append(t, [ev("v", "p")])
        assert len(s.recent(t, "v")) == 1
        for message in events.listen():  # bounded by the test's timeout (pytest-timeout)
            if message["type"] == "message" and t in str(message["data"]):
                break
        assert s.recent(t, "v") == []
    finally:
        events.close()
        s.clear(t)
        s.close()


def test_sqlite_write_is_seen_by_another_process(tmp_path: Path) -> None:
    """The embedded default carries an event from one process (edit) to another (predict)."""
    db = tmp_path / "events.sqlite3"
    reader = open_event_store_url(f"sqlite://{db}")
    assert reader.recent("shop", "v") == []
    code = (
        "from aisle.core.events import Event, open_event_store_url as o;"
        f"o('sqlite://{db}').append('shop', [Event('v', 'view', 'p42', 1.0)])"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert [e.product_id for e in reader.recent("shop", "v")] == ["p42"]
    reader.close()


def test_outbox_holds_events_until_done(store: EventStore, tenant: str) -> None:
    kept = Event("v1", "click", "p1", 1_700_000_000.0, event_id="e1", attribution_token="tok", position=3)
    store.append(tenant, [kept, ev("v1", "p2")], outbox=[kept])
    first = store.outbox(tenant, 10)
    assert [e for _, e in first] == [kept]  # only the events named, with every field
    store.append(tenant, [], outbox=[ev("v2", "p3")])
    assert [e.product_id for _, e in store.outbox(tenant, 10)] == ["p1", "p3"]  # oldest first
    assert len(store.outbox(tenant, 1)) == 1
    assert tenant in store.outbox_tenants()
    store.outbox_done(tenant, [first[0][0]])
    assert [e.product_id for _, e in store.outbox(tenant, 10)] == ["p3"]
    assert store.outbox(f"{tenant}x", 10) == []  # per tenant
    store.clear(tenant)
    assert store.outbox(tenant, 10) == [] and tenant not in store.outbox_tenants()
