"""PublicKeyCache under concurrency: a fresh replica's first requests share one fetch of the keys.

Before, the first request started the fetch and every request arriving while it ran was answered 503
``auth_unavailable`` (seen as failed requests right after a replica restarted behind HAProxy).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests.support.auth import AuthKit

from aisle.core.auth.jwks import PublicKeyCache, StoreJwksSource
from aisle.core.errors import ErrorCode, Unavailable
from aisle.core.storage import BlobStore


class SlowSource:
    """The keys in storage, each fetch taking ``delay_s`` (object storage over a network); counts fetches."""

    def __init__(self, store: BlobStore, delay_s: float = 0.05, fail: bool = False) -> None:
        self.inner = StoreJwksSource(store)
        self.delay_s, self.fail, self.fetches = delay_s, fail, 0

    async def fetch(self) -> dict[str, Any]:
        self.fetches += 1
        await asyncio.sleep(self.delay_s)
        if self.fail:
            raise Unavailable("storage down", code=ErrorCode.AUTH_UNAVAILABLE)
        return await self.inner.fetch()


def test_concurrent_first_requests_wait_for_one_fetch(blob_store: BlobStore) -> None:
    kid, _ = AuthKit(blob_store).keys.active()
    source = SlowSource(blob_store)
    cache = PublicKeyCache(source)

    async def many() -> list[object]:
        return await asyncio.gather(*(cache.get(kid) for _ in range(16)))

    keys = asyncio.run(many())
    assert all(key is not None for key in keys)
    assert source.fetches == 1


def test_a_failed_first_fetch_fails_every_waiter_once(blob_store: BlobStore) -> None:
    kid, _ = AuthKit(blob_store).keys.active()
    source = SlowSource(blob_store, fail=True)
    cache = PublicKeyCache(source)

    async def many() -> list[object]:
        return await asyncio.gather(*(cache.get(kid) for _ in range(8)), return_exceptions=True)

    errors = asyncio.run(many())
    assert all(isinstance(e, Unavailable) and e.code == ErrorCode.AUTH_UNAVAILABLE for e in errors)
    assert source.fetches == 1
    with pytest.raises(Unavailable):  # within min_interval, nothing cached: still unavailable, no fetch
        asyncio.run(cache.get(kid))
    assert source.fetches == 1
