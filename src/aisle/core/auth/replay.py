"""Single-use ``jti`` memory for client assertions (RFC 7523 section 3, item 7), chosen by URL.

A key is remembered until the assertion it came from has expired; after that the assertion itself is
refused for its ``exp``, so the memory can forget it.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


class ReplayStoreUnavailable(Exception):
    """The replay memory cannot be reached (e.g. Redis is down); the grant must fail closed."""


@runtime_checkable
class JtiStore(Protocol):
    """Remembers assertion ids so each one is accepted once."""

    def first_use(self, key: str, expires_at: float) -> bool:
        """Record ``key`` until ``expires_at`` (unix seconds).

        Returns True the first time a key is seen, False for a replay (atomic: of two concurrent calls
        with the same key exactly one gets True). Raises :class:`ReplayStoreUnavailable`.
        """
        ...


def open_jti_store(redis_url: str | None) -> JtiStore:
    """Redis when ``redis_url`` is set (shared by every worker and replica), else in-process memory.

    The in-process store only protects one process: with several token-service workers set
    ``AISLE_REDIS_URL``.
    """
    if redis_url:
        from aisle.core.auth.replay_redis import RedisJtiStore

        return RedisJtiStore.from_url(redis_url)
    from aisle.core.auth.replay_memory import MemoryJtiStore

    return MemoryJtiStore()
