"""EventStore on Redis: one capped, expiring list per visitor, batch writes in one pipeline.

Keys (built only here): ``aisle:<tenant>:events:<visitor>`` (a list, newest at the head, trimmed to
``cap`` with LTRIM and expiring ``ttl_s`` seconds after the last write) and
``aisle:<tenant>:user_features:<user>`` (a JSON string, no expiry) and ``aisle:<tenant>:outbox`` (a
stream of events awaiting delivery to analytics, entries deleted once delivered).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import orjson
import redis

from aisle.core.errors import EventStoreUnavailable
from aisle.core.events.store import DEFAULT_CAP, DEFAULT_TTL_S, Event
from aisle.core.redis_connection import redis_client


@contextlib.contextmanager
def _reachable() -> Iterator[None]:
    """Translate any Redis failure into :class:`EventStoreUnavailable` (503 with ``Retry-After``)."""
    try:
        yield
    except redis.RedisError as exc:
        raise EventStoreUnavailable(
            f"event store (Redis) unavailable: {exc.__class__.__name__}; retry shortly"
        ) from exc


def _events_key(tenant: str, visitor_id: str) -> str:
    return f"aisle:{tenant}:events:{visitor_id}"


def _outbox_key(tenant: str) -> str:
    return f"aisle:{tenant}:outbox"


def _features_key(tenant: str, user_id: str) -> str:
    return f"aisle:{tenant}:user_features:{user_id}"


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RedisEventStore:
    """:class:`~aisle.core.events.store.EventStore` over a Redis server.

    Args:
        url: ``redis://host:port/db``.
        cap: events kept per visitor.
        ttl_s: seconds a visitor's list lives after its last write.

    Raises (from every method):
        EventStoreUnavailable: Redis cannot be reached or did not answer within about two seconds
            (code ``event_store_unavailable``, HTTP 503, ``Retry-After``).

    An event acknowledged by :meth:`append` survives a Redis restart only as far as the server's
    persistence promises: ``appendonly yes`` with ``appendfsync always`` loses none (see
    ``docs/operations.md``).
    """

    def __init__(self, url: str, *, cap: int = DEFAULT_CAP, ttl_s: int = DEFAULT_TTL_S) -> None:
        self.url = url
        self.cap = cap
        self.ttl_s = ttl_s
        self.client = redis_client(url)

    def append(self, tenant: str, events: Sequence[Event], *, outbox: Sequence[Event] = ()) -> int:
        if not events and not outbox:
            return 0
        by_visitor: dict[str, list[bytes]] = {}
        for event in events:
            by_visitor.setdefault(event.visitor_id, []).append(event.to_json())
        with _reachable():
            # MULTI/EXEC when there is an outbox: the events and their outbox entries land together
            pipe = self.client.pipeline(transaction=bool(outbox))
            for visitor, payloads in by_visitor.items():
                key = _events_key(tenant, visitor)
                pipe.lpush(key, *payloads)
                pipe.ltrim(key, 0, self.cap - 1)
                pipe.expire(key, self.ttl_s)
            for event in outbox:
                pipe.xadd(_outbox_key(tenant), {"e": event.to_json()})
            pipe.execute()
        return len(events)

    def outbox(self, tenant: str, limit: int) -> list[tuple[str, Event]]:
        with _reachable():
            entries: Any = self.client.xrange(_outbox_key(tenant), count=limit)
        return [(_text(entry_id), Event.from_json(fields[b"e"])) for entry_id, fields in entries]

    def outbox_tenants(self) -> list[str]:
        with _reachable():
            keys = list(self.client.scan_iter(match=_outbox_key("*"), count=1000))
        return sorted(_text(k).split(":")[1] for k in keys)

    def outbox_done(self, tenant: str, entry_ids: Sequence[str]) -> None:
        if entry_ids:
            with _reachable():
                self.client.xdel(_outbox_key(tenant), *entry_ids)

    def recent(self, tenant: str, visitor_id: str, limit: int | None = None) -> list[Event]:
        n = self.cap if limit is None else max(0, min(limit, self.cap))
        if n == 0:
            return []
        with _reachable():
            raw = self.client.lrange(_events_key(tenant, visitor_id), 0, n - 1)
        return [Event.from_json(r) for r in raw]  # type: ignore[union-attr]

    def put_user_features(self, tenant: str, user_id: str, features: dict[str, Any]) -> None:
        with _reachable():
            self.client.set(_features_key(tenant, user_id), orjson.dumps(features))

    def user_features(self, tenant: str, user_id: str) -> dict[str, Any] | None:
        with _reachable():
            raw = self.client.get(_features_key(tenant, user_id))
        return None if raw is None else orjson.loads(raw)  # type: ignore[arg-type]

    def clear(self, tenant: str) -> None:
        with _reachable():
            self.client.delete(_outbox_key(tenant))
            for pattern in (_events_key(tenant, "*"), _features_key(tenant, "*")):
                keys = list(self.client.scan_iter(match=pattern, count=1000))
                for i in range(0, len(keys), 500):
                    self.client.delete(*keys[i : i + 500])

    def close(self) -> None:
        self.client.close()
