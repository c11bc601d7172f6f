"""A product's change history, read from the tenant's catalog change log (:mod:`aisle.catalog.changes`).

Each acknowledged write is one log entry ``{"seq", "at", "ops": [{"op", "id", "time", "fields"?}]}``;
a product's history is every operation of those entries that names it, newest first: the entry's
number and write time (``at``), the operation and its update time, and the fields it set (a patch's
fields as logged: only those that were not stale; an upsert's: the whole product; a delete: none).

What it covers: the log is pruned after compaction up to one catalog version behind, so the history
reaches back to the oldest entry still in the log (:attr:`ProductHistory.since`), not to the product's
first write; what came before is folded into the catalog version. Reading lists the log once and GETs
each entry not read before: entries never change once written, so they are kept per process (those
pruned since are dropped), and a page view after the first costs one listing and a GET per new entry.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from aisle.catalog.changes import ChangeLog, Op, OpKind
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants

PAGE_SIZE = 50
"""History rows per page (the console's page)."""
MAX_CACHED_OPS = 500_000
"""Operations kept in memory per tenant at most; past it the oldest entries are read again when needed
(a 54,667-product import through the log is one entry of that many operations)."""


@dataclass(frozen=True)
class Change:
    """One operation on the product: entry ``seq`` written at ``at`` (RFC 3339, the server's clock),
    ``op`` at update time ``time`` (microseconds since the epoch) setting ``fields`` (None removes one)."""

    seq: int
    at: str
    op: OpKind
    time: int
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ProductHistory:
    """One page of a product's changes, newest first.

    ``total``: the product's changes in the log; ``offset``/``limit``: this page. ``since``: when the
    oldest entry still in the log was written (None for an empty log) and ``first_seq`` its number; the
    history covers the writes from then on. ``head``: the log's newest entry number as read."""

    product_id: str
    changes: list[Change]
    total: int
    offset: int
    limit: int
    since: str | None
    first_seq: int
    head: int


@dataclass(frozen=True)
class _Entry:
    at: str
    ops: tuple[Op, ...]


class ChangeHistory:
    """Product histories of every tenant of ``tenants`` (see the module docstring). Thread-safe.

    Every method raises TenantNotFound (404) for an unknown tenant and StorageUnavailable (503) when
    the bucket fails."""

    def __init__(self, tenants: Tenants) -> None:
        self.tenants = tenants
        self._cache: dict[str, dict[int, _Entry]] = {}
        self._lock = threading.Lock()

    def of(self, tenant: str, product_id: str, *, offset: int = 0, limit: int = PAGE_SIZE) -> ProductHistory:
        """The changes of ``product_id`` in ``tenant``'s log, newest first, ``limit`` from ``offset``."""
        self.tenants.config(tenant)
        scope = self.tenants.scope(tenant)
        numbers = ChangeLog(scope).sequence()
        entries = self._entries(tenant, scope, numbers)
        found: list[Change] = []
        for seq in sorted(entries, reverse=True):
            entry = entries[seq]
            found += [Change(seq, entry.at, op.op, op.time, dict(op.fields))
                      for op in reversed(entry.ops) if op.id == product_id]  # fmt: skip
        first = min(entries, default=0)
        since = entries[first].at if entries else None
        offset, limit = max(offset, 0), max(limit, 1)
        head = max(numbers, default=0)
        return ProductHistory(
            product_id, found[offset : offset + limit], len(found), offset, limit, since, first, head
        )

    def _entries(self, tenant: str, scope: BlobStore, numbers: list[int]) -> dict[int, _Entry]:
        """The entries numbered ``numbers`` (one GET each for those not cached; one pruned meanwhile is
        left out)."""
        with self._lock:
            known = self._cache.get(tenant, {})
            kept = {n: known[n] for n in numbers if n in known}
        for seq in numbers:
            if seq not in kept and (entry := _read(scope, seq)) is not None:
                kept[seq] = entry
        with self._lock:
            self._cache[tenant] = _bounded(kept)
        return kept


def _read(scope: BlobStore, seq: int) -> _Entry | None:
    """Entry ``seq`` with its write time, its bulk's products one by one; None once pruned."""
    entry = ChangeLog(scope).read(seq)
    return None if entry is None else _Entry(entry.at, tuple(entry.operations))


def _bounded(entries: dict[int, _Entry]) -> dict[int, _Entry]:
    """The newest of ``entries`` holding at most :data:`MAX_CACHED_OPS` operations."""
    kept: dict[int, _Entry] = {}
    ops = 0
    for seq in sorted(entries, reverse=True):
        ops += len(entries[seq].ops)
        if ops > MAX_CACHED_OPS:
            break
        kept[seq] = entries[seq]
    return kept
