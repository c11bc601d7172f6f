"""EventStore on Redis: one capped, expiring list per visitor, batch writes in one pipeline.

Keys (built only here): ``aisle:<tenant>:events:<visitor>`` (a list, newest at the head, trimmed to
``cap`` with LTRIM and expiring ``ttl_s`` seconds after the last write) and
``aisle:<tenant>:user_features:<user>`` (a JSON string, no expiry).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
import redis

from aisle.core.errors import ErrorCode, Unavailable
from aisle.core.events.store import DEFAULT_CAP, DEFAULT_TTL_S, Event


def _events_key(tenant: str, visitor_id: str) -> str:
    return f"aisle:{tenant}:events:{visitor_id}"


def _features_key(tenant: str, user_id: str) -> str:
    return f"aisle:{tenant}:user_features:{user_id}"


class RedisEventStore:
    """:class:`~aisle.core.events.store.EventStore` over a Redis server.

    Args:
        url: ``redis://host:port/db``.
        cap: events kept per visitor.
        ttl_s: seconds a visitor's list lives after its last write.

    Raises (from every method):
        Unavailable: Redis cannot be reached (code ``event_store_unavailable``, HTTP 503).
    """

    def __init__(self, url: str, *, cap: int = DEFAULT_CAP, ttl_s: int = DEFAULT_TTL_S) -> None:
        self.url = url
        self.cap = cap
        self.ttl_s = ttl_s
        self.client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=2)

    def append(self, tenant: str, events: Sequence[Event]) -> int:
        if not events:
            return 0
        by_visitor: dict[str, list[bytes]] = {}
        for event in events:
            by_visitor.setdefault(event.visitor_id, []).append(event.to_json())
        try:
            pipe = self.client.pipeline(transaction=False)
            for visitor, payloads in by_visitor.items():
                key = _events_key(tenant, visitor)
                pipe.lpush(key, *payloads)
                pipe.ltrim(key, 0, self.cap - 1)
                pipe.expire(key, self.ttl_s)
            pipe.execute()
        except redis.RedisError as exc:
            raise _unavailable(exc) from exc
        return len(events)

    def recent(self, tenant: str, visitor_id: str, limit: int | None = None) -> list[Event]:
        n = self.cap if limit is None else max(0, min(limit, self.cap))
        if n == 0:
            return []
        try:
            raw = self.client.lrange(_events_key(tenant, visitor_id), 0, n - 1)
        except redis.RedisError as exc:
            raise _unavailable(exc) from exc
        return [Event.from_json(r) for r in raw]  # type: ignore[union-attr]

    def put_user_features(self, tenant: str, user_id: str, features: dict[str, Any]) -> None:
        try:
            self.client.set(_features_key(tenant, user_id), orjson.dumps(features))
        except redis.RedisError as exc:
            raise _unavailable(exc) from exc

    def user_features(self, tenant: str, user_id: str) -> dict[str, Any] | None:
        try:
            raw = self.client.get(_features_key(tenant, user_id))
        except redis.RedisError as exc:
            raise _unavailable(exc) from exc
        return None if raw is None else orjson.loads(raw)  # type: ignore[arg-type]

    def clear(self, tenant: str) -> None:
        try:
            for pattern in (_events_key(tenant, "*"), _features_key(tenant, "*")):
                keys = list(self.client.scan_iter(match=pattern, count=1000))
                for i in range(0, len(keys), 500):
                    self.client.delete(*keys[i : i + 500])
        except redis.RedisError as exc:
            raise _unavailable(exc) from exc

    def close(self) -> None:
        self.client.close()


def _unavailable(exc: Exception) -> Unavailable:
    return Unavailable(f"event store (Redis) unavailable: {exc}", code=ErrorCode.EVENT_STORE_UNAVAILABLE)
