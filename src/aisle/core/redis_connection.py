"""The one way Aisle opens a Redis client: bounded timeouts, and recovery without a restart.

Used by the event store (:mod:`aisle.core.events.store_redis`) and the token service's replay memory
(:mod:`aisle.core.auth.replay_redis`).
"""

from __future__ import annotations

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

SOCKET_TIMEOUT_S = 2.0
"""Seconds one Redis reply may take; past it the caller fails (the services answer 503)."""
CONNECT_TIMEOUT_S = 1.0
"""Seconds to open a connection (a refused one fails at once)."""


def redis_client(url: str) -> redis.Redis:
    """A client whose every command answers or fails within about two socket timeouts.

    One immediate retry on a connection error, so the first command after Redis restarted (on a pooled
    connection the old server closed) reconnects instead of failing; none on a timeout, which could
    repeat a write that landed. The services recover without restart: the pool reconnects by itself.
    """
    return redis.Redis.from_url(
        url,
        socket_timeout=SOCKET_TIMEOUT_S,
        socket_connect_timeout=CONNECT_TIMEOUT_S,
        retry=Retry(ExponentialBackoff(cap=0.05, base=0.01), 1, supported_errors=(redis.ConnectionError,)),
        retry_on_timeout=False,
    )
