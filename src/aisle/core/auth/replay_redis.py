"""Redis :class:`~aisle.core.auth.replay.JtiStore`, shared by every worker and replica."""

from __future__ import annotations

import math
import time

import redis

from aisle.core.auth.replay import ReplayStoreUnavailable
from aisle.core.redis_connection import redis_client


class RedisJtiStore:
    """``SET <prefix><key> 1 NX EXAT <expires_at>``: atomic first use, expiry handled by Redis.

    Args:
        client: a ``redis.Redis`` client.
        prefix: namespace of the keys, so no call site builds a raw Redis key.
    """

    def __init__(self, client: redis.Redis, prefix: str = "aisle:auth:jti:") -> None:
        self.client = client
        self.prefix = prefix

    @classmethod
    def from_url(cls, url: str, prefix: str = "aisle:auth:jti:") -> RedisJtiStore:
        return cls(redis_client(url), prefix)

    def first_use(self, key: str, expires_at: float) -> bool:
        ttl_ms = max(1, math.ceil((expires_at - time.time()) * 1000))
        try:
            return bool(self.client.set(self.prefix + key, b"1", nx=True, px=ttl_ms))
        except redis.RedisError as exc:
            raise ReplayStoreUnavailable(f"Redis replay store unreachable: {exc}") from exc
