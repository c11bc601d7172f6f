"""The search indexes one process serves: opened on first use, rebuilt or reopened on a new catalog.

A tenant's catalog version is checked at most every ``check_every`` seconds, so a new import is
served shortly after it completes, without a restart. One request checks (and builds a new version's
index); the others keep answering from the open index meanwhile instead of queueing behind it, and the
search service's event loop can keep answering them (issue 18: under load, every request arriving
during the once-a-second check used to go to the thread pool and wait).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from aisle.catalog.store import CatalogStore
from aisle.core.tenancy import TenantConfig, Tenants
from aisle.search.index.reader import TenantIndex
from aisle.search.index.writer import build_index, index_dir
from aisle.search.spelling import SpellingCorrector, add_query_log

Progress = Callable[[str, int, int], None]


class IndexRegistry:
    """Per-tenant :class:`TenantIndex` cache over the local data dir."""

    def __init__(self, tenants: Tenants, data_dir: Path, check_every: float = 1.0) -> None:
        self.tenants = tenants
        self.data_dir = Path(data_dir)
        self.check_every = check_every
        # tenant -> (last check, index, the attribute configuration object seen at that check)
        self._open: dict[str, tuple[float, TenantIndex, object]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def entry_count(self) -> int:
        """Tenant indexes held open."""
        return len(self._open)

    def _lock(self, tenant: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(tenant, threading.Lock())

    @contextlib.contextmanager
    def checking(self, tenant: str) -> Iterator[None]:
        """Hold ``tenant``'s check for the block, as a request reading storage or building does:
        meanwhile :meth:`get` serves the open index of the same configuration and waits for a new one."""
        with self._lock(tenant):
            yield

    def get(
        self, tenant: str, progress: Progress | None = None, *, config: TenantConfig | None = None
    ) -> TenantIndex:
        """The tenant's index for its current catalog, built if missing. ``config``: the tenant's
        configuration when the caller holds it already (default: looked up here).

        Raises:
            TenantNotFound, ConfigInvalid: from the tenant's configuration.
            CatalogNotFound: the tenant has no catalog yet.
        """
        config = config if config is not None else self.tenants.config(tenant)
        now = time.monotonic()
        entry = self._open.get(tenant)
        if entry is not None and now - entry[0] < self.check_every and entry[2] is config.attributes:
            return entry[1]
        lock = self._lock(tenant)
        # while another request checks storage (or builds), serve the open index of this configuration
        if not lock.acquire(blocking=entry is None or entry[2] is not config.attributes):
            assert entry is not None
            return entry[1]
        try:
            return self._check(tenant, config, now, progress)
        finally:
            lock.release()

    def _check(self, tenant: str, config: TenantConfig, now: float, progress: Progress | None) -> TenantIndex:
        """The tenant's index after a look at storage (its lock held): the open one when its catalog
        version and configuration are still current, else the current catalog's, built if missing."""
        entry = self._open.get(tenant)
        store = CatalogStore(self.tenants.scope(tenant))
        version = store.current_version()
        if (
            entry is not None
            and entry[1].version == version
            and (
                entry[1].config is config.attributes
                or entry[1].config.model_dump() == config.attributes.model_dump()
            )
        ):
            self._open[tenant] = (now, entry[1], config.attributes)
            return entry[1]
        catalog = store.load(version)
        path = index_dir(self.data_dir, tenant, catalog.version, config.attributes)
        if not (path / "CATALOG_VERSION").exists():
            build_index(catalog, config.attributes, path, progress=progress)
        index = TenantIndex.open(tenant, path, catalog, config.attributes)
        self._add_query_log(tenant, index)
        self._open[tenant] = (time.monotonic(), index, config.attributes)
        return index

    def _add_query_log(self, tenant: str, index: TenantIndex) -> None:
        """Weight the speller's catalog words by the tenant's query log, when it has one."""
        from aisle.search.querylog import QueryLogStore

        log = QueryLogStore(self.tenants.scope(tenant)).load()
        if log.height:
            index.speller = SpellingCorrector(add_query_log(index.speller.vocabulary, log))

    def serving_version(self, tenant: str) -> str | None:
        """The catalog version this process serves for ``tenant``: its open index's, else the current
        one in storage (None: no catalog). Raises StorageUnavailable (503)."""
        entry = self._open.get(tenant)
        if entry is not None:
            return entry[1].version
        return CatalogStore(self.tenants.scope(tenant)).current_version()

    def is_current(self, tenant: str, attributes: object, *, look: bool = False) -> bool:
        """Whether :meth:`get` would answer from memory: the tenant's index is open, ``attributes`` is the
        configuration it saw, and it was checked against storage less than ``check_every`` seconds ago
        or another request is checking it now (meanwhile the open index is served).

        ``look``: when the check is due and nobody is checking, make it here: read the catalog pointer
        and, when the version is the open index's, count the index checked (True). For a caller whose
        store is local, where the read is a file read (:meth:`SearchEngine.readiness`); a new version,
        or a pointer that cannot be read, is left to :meth:`get` (False). Without it, every request
        arriving between the check falling due and a thread-pool request taking it went to the thread
        pool (issue 32: about a tenth of a 32-client fashion run, in bursts once a second).
        """
        entry = self._open.get(tenant)
        if entry is None or entry[2] is not attributes:
            return False
        now = time.monotonic()
        if now - entry[0] < self.check_every:
            return True
        lock = self._lock(tenant)
        if not lock.acquire(blocking=False):
            return True  # another request is checking: the open index is served meanwhile
        try:
            if not look:
                return False
            try:
                version = CatalogStore(self.tenants.scope(tenant)).current_version()
            except Exception:  # get() raises it, with its status
                return False
            if version != entry[1].version or self._open.get(tenant) is not entry:
                return False
            self._open[tenant] = (now, entry[1], attributes)
            return True
        finally:
            lock.release()

    def loaded(self) -> list[str]:
        return sorted(self._open)
