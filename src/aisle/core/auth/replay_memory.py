"""In-process :class:`~aisle.core.auth.replay.JtiStore` (one process; the default without Redis)."""

from __future__ import annotations

import heapq
import threading
import time


class MemoryJtiStore:
    """Keys in a dict, expired ones dropped lazily from a heap ordered by expiry.

    Args:
        max_keys: refuse (treat as replay) beyond this many live keys, so a flood of valid assertions
            cannot exhaust memory; 1,000,000 keys is about 150 MB.
    """

    def __init__(self, max_keys: int = 1_000_000) -> None:
        self.max_keys = max_keys
        self._seen: dict[str, float] = {}
        self._expiry: list[tuple[float, str]] = []
        self._lock = threading.Lock()

    def first_use(self, key: str, expires_at: float) -> bool:
        now = time.time()
        with self._lock:
            while self._expiry and self._expiry[0][0] <= now:
                _, old = heapq.heappop(self._expiry)
                if self._seen.get(old, now + 1) <= now:
                    del self._seen[old]
            seen = self._seen.get(key)
            if seen is not None and seen > now:
                return False
            if len(self._seen) >= self.max_keys:
                return False
            self._seen[key] = expires_at
            heapq.heappush(self._expiry, (expires_at, key))
            return True
