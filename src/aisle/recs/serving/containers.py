"""Containers for the predict engine, each read from storage at most once per ``ttl_s`` seconds.

Reading a container through :class:`~aisle.recs.containers.ContainerStore` costs a head-hint read
and at least one existence probe (:class:`~aisle.core.storage.revisions.RevisionLog`): two GETs per
request on S3. The predict engine reads one container per request, so it keeps what it read (a
container, or the fact that the id does not exist) per (tenant, container id) for ``ttl_s`` seconds.

Staleness bound: an edit made through the edit service (create, replace, delete) is seen by a predict
process at most ``ttl_s`` seconds after it was written, plus the duration of one storage read. The
same holds for a container created after predict was asked for it (the miss is cached too, so a flood
of requests for a missing id reads storage once per ``ttl_s``). ``ttl_s = 0`` reads on every call.

Misses are kept apart from containers, in a smaller bound of their own: a flood of made-up ids evicts
only other misses, never a container real traffic is using.
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
        max_entries: bound on the containers kept; beyond it the least recently read one is dropped.
        max_misses: bound on the misses (ids found not to exist) kept, least recently read dropped
            first; misses never push out containers.
        clock: monotonic seconds (tests move time instead of sleeping).
    """

    def __init__(
        self,
        ttl_s: float = CONTAINER_TTL_S,
        *,
        max_entries: int = 4096,
        max_misses: int = 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if ttl_s < 0:
            raise ValueError(f"ttl_s must be >= 0, got {ttl_s}")
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self.max_misses = max_misses
        self.clock = clock
        # (tenant, container id) -> when the read started, and the container; insertion order is read
        # order, so the first key of each is always its least recently read
        self._found: dict[tuple[str, str], tuple[float, Container]] = {}
        self._missing: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()

    def entry_count(self) -> int:
        """Containers and misses held."""
        return len(self._found) + len(self._missing)

    def cached(self, tenant: str, container_id: str) -> Container | None:
        """The container when a fresh entry knows it without I/O, else None (missing or stale entry).

        Raises:
            ContainerNotFound: a fresh entry records that the id does not exist.
        """
        key, now = (tenant, container_id), self.clock()
        hit = self._found.get(key)
        if hit is not None and now - hit[0] < self.ttl_s:
            return hit[1]
        missed = self._missing.get(key)
        if missed is not None and now - missed < self.ttl_s:
            raise ContainerNotFound.of(container_id)
        return None

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
            self._keep((tenant, container_id), started, container)
        if container is None:
            raise ContainerNotFound.of(container_id)
        return container

    def _keep(self, key: tuple[str, str], started: float, container: Container | None) -> None:
        with self._lock:
            had = self._found.pop(key, None)
            missed = self._missing.pop(key, None)
            if had is not None and had[0] > started:  # a concurrent read began later: keep it
                self._found[key] = had
            elif missed is not None and missed > started:
                self._missing[key] = missed
            elif container is not None:
                _bounded(self._found, self.max_entries)[key] = (started, container)
            else:
                _bounded(self._missing, self.max_misses)[key] = started


def _bounded(entries: dict, bound: int) -> dict:
    """``entries`` with its least recently read entries dropped until one more fits under ``bound``."""
    while entries and len(entries) >= bound:
        del entries[next(iter(entries))]
    return entries
