"""Choose a JtiStore backend: the one place that knows every backend (so the protocol module imports none)."""

from __future__ import annotations

from aisle.core.auth.replay import JtiStore


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
