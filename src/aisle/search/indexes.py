"""The search indexes one process serves: opened on first use, rebuilt or reopened on a new catalog,
and kept up with the tenant's change log.

A tenant's catalog version is checked at most every ``check_every`` seconds, so a new import is
served shortly after it completes, without a restart. One request checks (and builds a new version's
index); the others keep answering from the open index meanwhile, on the event loop (issue 18).

Product writes (issue 41): an index is opened with the change-log entries after its version applied
(a new or restarted process serves a version only once it has caught up with the log it found), and
:class:`~aisle.search.follower.LogFollower` (a background thread of the search service, every
``AISLE_CATALOG_FOLLOW_SECONDS``) applies the entries written since to every open index
(:mod:`aisle.search.index.live`), swapping in each new snapshot; a request never waits for it. When
compaction (or an import) moves the catalog pointer, the new version's index is built in a thread of
its own (``background``: the search service) while every request is served the old one, which the
follower keeps applying the log to; the new one is caught up from the sequence its version includes,
and with what the old one applied meanwhile, before it is swapped in, so the sequence served never goes
back (a build whose log was pruned meanwhile is dropped; the newest version is built next). A gap in the
log (entries pruned before this process read them: it fell a whole compaction behind) is closed the
same way, by the next version.

While writes stream in, the new version waits: it is built once no entry has been applied for
``settle_s`` seconds (``AISLE_CATALOG_SETTLE_SECONDS``), or once the open index holds ``tail_rows``
written rows on top of its version (``AISLE_CATALOG_TAIL_ROWS``). The open index serves every write
already; a version built and caught up during a stream cost each worker seconds of CPU per compaction
(issue 41's profile of 1,000 writes a second: about a third of the search workers' CPU). A large import
is not applied at all: the follower waits for the version that includes it (:mod:`.bulk_hold`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from aisle.catalog.changes import ChangeLog, Entry, Head
from aisle.catalog.store import CatalogNotFound, CatalogStore, Pointer
from aisle.core.config import Settings
from aisle.core.memory import freeze_heap, release_freed_memory
from aisle.core.tenancy import TenantConfig, Tenants
from aisle.search.bulk_hold import BulkHolds
from aisle.search.child_builds import ChildBuilds
from aisle.search.index.applier import Applier
from aisle.search.index.live import LIVE_DIR, LiveIndex, remove_dead_copies
from aisle.search.index.reader import TenantIndex
from aisle.search.index.writer import remove_old_indexes
from aisle.search.opening import open_version

Progress = Callable[[str, int, int], None]
log = logging.getLogger("aisle.search")


@dataclass
class _Open:
    """A tenant's open index: the snapshot served, when storage was last checked, the attribute
    configuration object seen then, and what applies the change log to it."""

    checked: float
    index: TenantIndex
    attributes: object
    live: LiveIndex


class IndexRegistry:
    """Per-tenant :class:`TenantIndex` cache over the local data dir, following the change log.

    ``live_dirs``: where the private copies of followed indexes go (default ``<data dir>/live``; the
    search service passes ``Settings.live_dirs()``)."""

    def __init__(
        self,
        tenants: Tenants,
        data_dir: Path,
        check_every: float = 1.0,
        live_dirs: list[Path] | None = None,
        *,
        background: bool = False,
        settle_s: float = 0.0,
        tail_rows: int = 0,
        holds: BulkHolds | None = None,
        applier: Applier | None = None,
        freeze: bool = False,
        builds: ChildBuilds | None = None,
    ) -> None:
        self.tenants = tenants
        self.freeze = freeze  # the heap after serving a new index (aisle.core.memory.freeze_heap)
        self.applier = applier  # the child process writing index copies (None: the applying thread)
        self.builds = builds  # where a missing version's index is built (None: here; aisle.search.opening)
        self.holds = holds
        """Large imports served by the next version's index instead of applied (:mod:`.bulk_hold`)."""
        self.background = background
        """Build a new catalog version's index in a thread of its own while the open one is served (the
        search service); else the checking request builds it (a command, a test, an offline job)."""
        self.settle_s = settle_s
        """With ``background``: a new version is built once no entry was applied for this long..."""
        self.tail_rows = tail_rows
        """... or once the open index holds this many rows written on top of its version."""
        self.warm: Callable[[TenantIndex], None] | None = None
        """Called with a new version's index built in the background, and with each snapshot the
        follower makes, before it is served: the engine builds (or grows) the ranker's token table
        there, so no search pays for it (seconds for a version, milliseconds for a snapshot)."""
        self._building: set[str] = set()
        self._follows: dict[str, threading.Lock] = {}
        self.data_dir = Path(data_dir)
        self.live_dirs = live_dirs or [self.data_dir / LIVE_DIR]
        """Where the copies of followed indexes go, first choice first (:class:`LiveIndex`)."""
        self.check_every = check_every
        self._open: dict[str, _Open] = {}
        self._retired: list[LiveIndex] = []
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    @classmethod
    def serving(cls, tenants: Tenants, settings: Settings) -> IndexRegistry:
        """The search service's registry: its data dir, check interval and live dirs, and new versions
        built in the background when the change log is followed (``AISLE_CATALOG_FOLLOW_SECONDS`` > 0)."""
        return cls(
            tenants,
            settings.data_dir,
            settings.catalog_check_seconds,
            live_dirs=settings.live_dirs(),
            background=settings.catalog_follow_seconds > 0,
            settle_s=settings.catalog_settle_seconds,
            tail_rows=settings.catalog_tail_rows,
            holds=BulkHolds(tenants, settings.catalog_rebuild_share),
            applier=Applier(settings.storage_url) if settings.catalog_applier == "process" else None,
            freeze=settings.gc_freeze,
            builds=ChildBuilds(settings.storage_url, settings.data_dir)
            if settings.search_builds == "process"
            else None,
        )

    def entry_count(self) -> int:
        """Tenant indexes held open."""
        return len(self._open)

    def _lock(self, tenant: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(tenant, threading.Lock())

    def _follow_lock(self, tenant: str) -> threading.Lock:
        """Held while a snapshot of ``tenant`` is applied and served, or a new index swapped in."""
        with self._guard:
            return self._follows.setdefault(tenant, threading.Lock())

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
        if (
            entry is not None
            and now - entry.checked < self.check_every
            and entry.attributes is config.attributes
        ):
            return entry.index
        lock = self._lock(tenant)
        # while another request checks storage (or builds), serve the open index of this configuration
        if not lock.acquire(blocking=entry is None or entry.attributes is not config.attributes):
            assert entry is not None
            return entry.index
        try:
            return self._check(tenant, config, now, progress)
        finally:
            lock.release()

    def _check(self, tenant: str, config: TenantConfig, now: float, progress: Progress | None) -> TenantIndex:
        """The tenant's index after a look at storage (its lock held): the open one when its catalog
        version and configuration are still current, else the current catalog's, built if missing and
        caught up with the change log."""
        entry = self._open.get(tenant)
        scope = self.tenants.scope(tenant)
        store = CatalogStore(scope)
        pointer = store.pointer()
        if (
            entry is not None
            and not entry.live.broken
            and entry.index.version == (pointer.version if pointer else None)
            and (
                entry.index.config is config.attributes
                or entry.index.config.model_dump() == config.attributes.model_dump()
            )
        ):
            entry.checked, entry.attributes = now, config.attributes
            return entry.index
        if pointer is None:
            raise CatalogNotFound("the tenant has no catalog yet: run `aisle catalog import`")
        same_config = entry is not None and entry.index.config.model_dump() == config.attributes.model_dump()
        if self.background and entry is not None and same_config and not entry.live.broken:
            entry.checked, entry.attributes = now, config.attributes  # served meanwhile, and followed
            live = entry.live
            held = self.holds is not None and tenant in self.holds
            if now - live.applied_at >= self.settle_s or live.tail_rows >= self.tail_rows or held:
                self._build_later(tenant, config, pointer)  # else writes go on: later (module docstring)
            return entry.index
        return self._swap(tenant, self._opened(tenant, config, pointer, progress))

    def _opened(
        self, tenant: str, config: TenantConfig, pointer: Pointer, progress: Progress | None
    ) -> _Open:
        """The index of the version ``pointer`` names, built if missing, with the log after it applied."""
        index, path, products = open_version(
            self.tenants, self.data_dir, tenant, pointer.version, config.attributes,
            sequence=pointer.sequence, builds=self.builds, progress=progress,
        )  # fmt: skip
        live = LiveIndex(index, path, self.live_dirs, products, self.applier)
        index = live.apply(self._pending(tenant, pointer.sequence))
        release_freed_memory()  # opening (or building) freed hundreds of MB of temporaries
        return _Open(time.monotonic(), index, config.attributes, live)

    def _swap(self, tenant: str, slot: _Open) -> TenantIndex:
        """Serve ``slot`` from now on, caught up first with what the open index applied meanwhile (so
        the sequence served never goes back), and retire the open one."""
        with self._follow_lock(tenant):
            old = self._open.get(tenant)
            if old is not None and slot.index.sequence < old.index.sequence:
                entries = self._pending(tenant, slot.live.sequence)
                slot.index = slot.live.apply(entries)
            if old is not None and slot.index.sequence < old.index.sequence and not old.live.broken:
                slot.live.close()  # its log was pruned meanwhile (a newer version exists): keep serving
                return old.index
            self._open[tenant] = slot
        if old is not None:
            self._retire(old.live)
            remove_old_indexes(slot.live.path)  # a compaction a minute would fill the disk otherwise
        if self.freeze:
            freeze_heap()  # the index is kept until the next version: no collection walks it again
        return slot.index

    def _build_later(self, tenant: str, config: TenantConfig, pointer: Pointer) -> None:
        """Build ``pointer``'s index in a thread and swap it in when caught up (one build per tenant at a
        time; a failure is logged, and the next check starts another)."""
        with self._guard:
            if tenant in self._building:
                return
            self._building.add(tenant)

        def build() -> None:
            try:
                newest = CatalogStore(self.tenants.scope(tenant)).pointer() or pointer
                current = self._open.get(tenant)
                if current is not None and current.index.version == newest.version:
                    return  # a build that ended while this one was asked for swapped it in already
                slot = self._opened(tenant, config, newest, None)
                slot.live.prepare()
                self._warm(slot.index)
                self._swap(tenant, slot)
            except Exception:
                log.exception("building %s's index of catalog version %s failed", tenant, pointer.version)
            finally:
                with self._guard:
                    self._building.discard(tenant)

        threading.Thread(target=build, name=f"aisle-index-{tenant}", daemon=True).start()

    def _retire(self, live: LiveIndex) -> None:
        """Close the copies retired before ``live`` (a search may still hold the newest one retired)."""
        with self._guard:
            old, self._retired = self._retired, [live]
        for done in old:
            done.close()

    def follow(self, tenant: str) -> int | None:
        """Apply the change-log entries written since the tenant's open index to it and serve the new
        snapshot; returns the sequence now served (None: the tenant has no open index).

        A gap in the log (entries pruned before this process read them) or a failed apply leaves the
        index for the next request to open again, caught up. Raises StorageUnavailable (503) reading
        the log; nothing is applied then."""
        with self._follow_lock(tenant):
            entry = self._open.get(tenant)
            if entry is None:
                return None
            live = entry.live
            if live.broken:
                entry.checked = float("-inf")
                return entry.index.sequence
            if self.holds is not None and self.holds.waiting(tenant, entry.index.sequence):
                return entry.index.sequence  # a large import: the next version's index serves it
            entries = self._pending(tenant, live.sequence)
            if self.holds is not None and self.background:
                entries = self.holds.split(tenant, entries, entry.index.searcher.num_docs)
            if not entries:
                return entry.index.sequence
            try:
                snapshot = live.apply(entries)
            except Exception:
                log.exception("applying %s's change log failed: its index is opened again", tenant)
                entry.checked = float("-inf")
                return entry.index.sequence
            entry.index = snapshot  # a search holds the snapshot it started with
        self._warm(snapshot)  # after it is served: a search arriving meanwhile does it (or waits for it)
        return snapshot.sequence

    def _pending(self, tenant: str, sequence: int) -> list[Entry | Head]:
        """The log's entries after ``sequence`` (only numbers and bulk sizes for an applier process)."""
        changes = ChangeLog(self.tenants.scope(tenant))
        return [*(changes.heads(sequence) if self.applier is not None else changes.after(sequence))]

    def _warm(self, index: TenantIndex) -> None:
        """Run :attr:`warm` on ``index`` before it is served (a failure only leaves the work to a search)."""
        if self.warm is not None:
            try:
                self.warm(index)
            except Exception:
                log.exception("warming %s's index failed", index.tenant)

    def serving_version(self, tenant: str) -> str | None:
        """The catalog version this process serves for ``tenant``: its open index's, else the current
        one in storage (None: no catalog). Raises StorageUnavailable (503)."""
        entry = self._open.get(tenant)
        if entry is not None:
            return entry.index.version
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
        if entry is None or entry.attributes is not attributes:
            return False
        now = time.monotonic()
        if now - entry.checked < self.check_every:
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
            if version != entry.index.version or self._open.get(tenant) is not entry or entry.live.broken:
                return False
            entry.checked = now
            return True
        finally:
            lock.release()

    def loaded(self) -> list[str]:
        return sorted(self._open)

    def remove_dead_copies(self) -> int:
        """Remove the index copies of every tenant left by processes of this host that have exited
        (killed ones too); returns how many went."""
        folders = [f for root in self.live_dirs if root.is_dir() for f in root.iterdir() if f.is_dir()]
        return sum(remove_dead_copies(folder) for folder in folders)

    def close(self) -> None:
        """Remove this process's private index copies (the built indexes stay)."""
        with self._guard:
            lives = [e.live for e in self._open.values()] + self._retired
            self._open, self._retired = {}, []
        for live in lives:
            live.close()
        if self.applier is not None:
            self.applier.close()
