"""Containers for the predict engine, each read from storage at most once per ``ttl_s`` seconds.

Reading a container through :class:`~aisle.recs.containers.ContainerStore` costs a head-hint read
and at least one existence probe (:class:`~aisle.core.storage.revisions.RevisionLog`): two GETs per
request on S3. The predict engine reads one container per request, so it keeps what it read (a
container, or the fact that the id does not exist) per (tenant, container id) for ``ttl_s`` seconds.

Staleness bound: an edit made through the edit service (create, replace, delete) is seen by a predict
process at most ``ttl_s`` seconds after it was written, plus the duration of one storage read. The
same holds for a container created after predict was asked for it (the miss is cached too, so a flood
of requests for a missing id reads storage once per ``ttl_s``). ``ttl_s = 0`` reads on every call.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from aisle.recs.containers import Container, ContainerNotFound, ContainerStore

CONTAINER_TTL_S = 2.0
"""Default TTL, the same as ``Settings.container_cache_seconds`` (``AISLE_CONTAINER_CACHE_SECONDS``)."""


class ContainerCache:
    """Recently read containers and misses of every tenant of one predict process. Thread-safe.

    Args:
        ttl_s: seconds an entry is reused (0 disables the cache: every call reads storage).
        max_entries: bound on the entries kept; beyond it the least recently read one is dropped.
        clock: monotonic seconds (tests move time instead of sleeping).
    """

    def __init__(
        self,
        ttl_s: float = CONTAINER_TTL_S,
        *,
        max_entries: int = 4096,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if ttl_s < 0:
            raise ValueError(f"ttl_s must be >= 0, got {ttl_s}")
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self.clock = clock
        # (tenant, container id) -> (when the read started, container or None for "does not exist");
        # insertion order is read order, so the first key is always the least recently read
        self._entries: dict[tuple[str, str], tuple[float, Container | None]] = {}
        self._lock = threading.Lock()

    def cached(self, tenant: str, container_id: str) -> Container | None:
        """The container when a fresh entry knows it without I/O, else None (missing or stale entry).

        Raises:
            ContainerNotFound: a fresh entry records that the id does not exist.
        """
        hit = self._entries.get((tenant, container_id))
        if hit is None or self.clock() - hit[0] >= self.ttl_s:
            return None
        if hit[1] is None:
            raise ContainerNotFound.of(container_id)
        return hit[1]

    def get(self, tenant: str, containers: ContainerStore, container_id: str) -> Container:
        """The container from a fresh entry, else read from ``containers`` (the tenant's store) and kept.

        Raises:
            ContainerNotFound: the id was never created or is deleted (also from a cached miss).
        """
        found = self.cached(tenant, container_id)
        if found is not None:
            return found
        started = self.clock()  # the entry ages from before the read: the bound holds for slow reads
        container = containers.find(container_id)
        if self.ttl_s > 0:
            key = (tenant, container_id)
            with self._lock:
                newer = self._entries.pop(key, None)
                if newer is not None and newer[0] > started:  # a concurrent read began later: keep it
                    self._entries[key] = newer
                else:
                    while len(self._entries) >= self.max_entries:
                        del self._entries[next(iter(self._entries))]
                    self._entries[key] = (started, container)
        if container is None:
            raise ContainerNotFound.of(container_id)
        return container
