"""Large imports are served by building the next catalog version's index once, not applied by every worker.

A search process applies each change-log entry to its open index (:mod:`aisle.search.index.live`): for a
price change that is milliseconds, but an import's bulk of 44,441 fashion products cost each of two
workers 8.8 s of CPU to apply (issue 41's bench: the answer to the file searchable), twice the work of
indexing the products afresh (live apply per product about 2.7x a build's in cProfile: the row tail,
keyword values, the speller's words), and every worker of every replica does it. A compacted version's
index is built once per host (:func:`aisle.search.index.writer.ensure_index`), so when a bulk holds at
least ``share`` of the products the open index serves (and at least ``min_rows``), the follower applies
the entries before it, then *holds*: it compacts the log now (one process gets the lease; the others
find it taken) and leaves the index as it is until the version that includes the bulk is swapped in
(:meth:`aisle.search.indexes.IndexRegistry.follow`), which the registry's catalog check builds at once
while a hold is on. A hold that has not ended after ``timeout_s`` is given up, and the bulk applied as
any entry. Writes after the bulk wait with it (they are in the new version or its log tail).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time

from aisle.catalog.changes import Entry, Head
from aisle.catalog.compaction import compact
from aisle.core.errors import AisleError
from aisle.core.tenancy import Tenants

log = logging.getLogger("aisle.search")

MIN_ROWS = 5_000
"""A bulk smaller than this is always applied (a build's fixed costs are worth it only past it)."""
TIMEOUT_S = 120.0


class BulkHolds:
    """Which tenants wait for a rebuilt version instead of applying a large bulk (module docstring).

    ``share``: a bulk of at least this share of the served products is held (0: never); ``min_rows``
    and ``timeout_s`` as :data:`MIN_ROWS` and :data:`TIMEOUT_S`. Thread-safe."""

    def __init__(
        self, tenants: Tenants, share: float, *, min_rows: int = MIN_ROWS, timeout_s: float = TIMEOUT_S
    ) -> None:
        self.tenants = tenants
        self.share = share
        self.min_rows = min_rows
        self.timeout_s = timeout_s
        self._held: dict[str, tuple[int, float]] = {}  # tenant -> (the bulk's sequence, held since)
        self._guard = threading.Lock()

    def __contains__(self, tenant: str) -> bool:
        return tenant in self._held

    def waiting(self, tenant: str, served: int) -> bool:
        """Whether ``tenant``'s follower should leave its index as it is: a hold is on, the index
        serves a sequence (``served``) before the held bulk, and the hold has not timed out. A hold
        whose bulk is served (the new version swapped in) ends here."""
        with self._guard:
            held = self._held.get(tenant)
            if held is None:
                return False
            if served >= held[0]:
                del self._held[tenant]
                return False
            return time.monotonic() - held[1] < self.timeout_s

    def split(self, tenant: str, entries: list[Entry | Head], products: int) -> list[Entry | Head]:
        """The entries to apply now (``products``: how many the open index serves): all of them, or
        those before the first bulk large enough to hold, which starts a hold and a compaction. A bulk
        whose hold timed out is not held again."""
        if self.share <= 0:
            return entries
        for i, entry in enumerate(entries):
            rows = entry.bulk_rows
            if rows < max(self.min_rows, self.share * products):
                continue
            with self._guard:
                held = self._held.get(tenant)
                if held is not None and held[0] == entry.seq:
                    return entries  # timed out: apply it
                self._held[tenant] = (entry.seq, time.monotonic())
            log.info(
                "%s: a bulk of %d products (change %d) is served by the next catalog version's index",
                tenant, rows, entry.seq,
            )  # fmt: skip
            threading.Thread(target=self._compact, args=(tenant,), name=f"aisle-compact-{tenant}").start()
            return entries[:i]
        return entries

    def _compact(self, tenant: str) -> None:
        """Fold the log into a version now (another process holding the lease is compacting already)."""
        try:
            with contextlib.suppress(AisleError):
                compact(self.tenants, tenant)
        except Exception:  # the hold times out, and the bulk is applied then
            log.exception("compacting %s for a held bulk failed", tenant)
