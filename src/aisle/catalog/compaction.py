"""Compaction: the change log folded into a new catalog version, which the search processes then index.

The search processes apply the log to their open index as it grows (:mod:`aisle.search.indexes`), so a
write is searchable long before it is compacted; compaction bounds the log a new or restarted process
applies on top of the last version, and gives suggestions, vectors and the speller the new products.

:func:`compact` reads the current version and the entries after it (:mod:`aisle.catalog.state`), writes
the products and their update times as a new version whose pointer records the sequence it includes
(the pointer last: a reader sees the old version or the new one), then prunes the entries the
*previous* version included (:mod:`aisle.catalog.changes`). Serving never pauses: the search processes
keep serving (and following) their open index until the new version's is built and caught up
(:class:`aisle.search.indexes.IndexRegistry` checks the pointer every ``AISLE_CATALOG_CHECK_SECONDS``).

One compactor per tenant at a time across processes: a *lease*, ``catalog-changes/lease/<n:012d>.json``
taken with create-if-absent (of two processes taking the next number, one wins), held until released
or for :data:`LEASE_S` seconds after a holder died. A compaction that found its lease taken is
skipped (the background loop tries again at its next tick; ``aisle catalog compact`` says 409
``catalog_compacting``).

:class:`Compactor` runs compactions in the background (every ``AISLE_CATALOG_COMPACT_SECONDS``, 60 s)
for the tenants written through this process and those it serves, when the log holds entries after
the current version.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import socket
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import orjson

from aisle.catalog.changes import ROOT, ChangeLog
from aisle.catalog.state import TIMES_FILE, CatalogState
from aisle.catalog.store import CatalogStore
from aisle.core.background import BackgroundLoop
from aisle.core.errors import AisleError, ErrorCode, TenantNotFound
from aisle.core.storage import BlobNotFound, BlobStore
from aisle.core.tenancy import Tenants

log = logging.getLogger("aisle.catalog")

LEASE_S = 300.0
"""How long a compaction's lease holds when its holder dies without releasing it (seconds): longer than
folding a million products takes (about two minutes, the issue's measure of a full version)."""
_LEASE = re.compile(r"^(\d{12})\.json$")


def process_owner() -> str:
    """A name for this process as a lease holder: host, pid and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class Lease:
    """The compaction lease of one tenant (``scope``: its bucket scope); see the module docstring."""

    def __init__(self, scope: BlobStore, owner: str, *, ttl: float = LEASE_S) -> None:
        self.scope = scope
        self.owner = owner
        self.ttl = ttl

    @staticmethod
    def _path(n: int) -> str:
        return f"{ROOT}/lease/{n:012d}.json"

    def _numbers(self) -> list[int]:
        found = (_LEASE.match(p.rsplit("/", 1)[-1]) for p in self.scope.list(f"{ROOT}/lease/"))
        return sorted(int(m.group(1)) for m in found if m)

    def held_by_another(self, numbers: list[int] | None = None) -> bool:
        """Whether a live lease is held now (not released, not expired)."""
        numbers = self._numbers() if numbers is None else numbers
        if not numbers:
            return False
        try:
            doc = orjson.loads(self.scope.get(self._path(numbers[-1])))
        except (BlobNotFound, orjson.JSONDecodeError):
            return False
        return not doc.get("released") and float(doc.get("expires", 0)) > time.time()

    def acquire(self) -> int | None:
        """Take the lease; its number, or None when another process holds it (or took it first)."""
        numbers = self._numbers()
        if self.held_by_another(numbers):
            return None
        n = (numbers[-1] if numbers else 0) + 1
        doc = {"owner": self.owner, "expires": time.time() + self.ttl, "released": False}
        if not self.scope.put_if_absent(self._path(n), orjson.dumps(doc)):
            return None
        for old in numbers[:-1]:
            self.scope.delete(self._path(old))
        return n

    def release(self, n: int) -> None:
        """Give lease ``n`` back (the next compaction, anywhere, may start at once)."""
        self.scope.put(self._path(n), orjson.dumps({"owner": self.owner, "expires": 0, "released": True}))


@dataclass(frozen=True)
class Compaction:
    """A compaction's new version, the change-log sequence it includes and its product count."""

    tenant: str
    version: str
    sequence: int
    products: int


def pending(scope: BlobStore) -> bool:
    """Whether the log holds an entry after the current version (two small reads)."""
    pointer = CatalogStore(scope).pointer()
    return ChangeLog(scope).exists((pointer.sequence if pointer else 0) + 1)


def compact(tenants: Tenants, tenant: str, *, owner: str | None = None) -> Compaction | None:
    """Fold ``tenant``'s change log into a new catalog version; None when there was nothing to fold.

    Raises:
        TenantNotFound (404), ConfigInvalid (503): from the tenant's configuration.
        AisleError ``catalog_compacting`` (409): another process holds the tenant's lease.
        StorageUnavailable (503): the bucket failed; the current version stays current.
    """
    config = tenants.config(tenant)
    scope = tenants.scope(tenant)
    lease = Lease(scope, owner or process_owner())
    n = lease.acquire()
    if n is None:
        raise AisleError(
            f"another process is compacting tenant '{tenant}''s catalog; try again shortly",
            code=ErrorCode.CATALOG_COMPACTING,
        )
    try:
        store = CatalogStore(scope)
        pointer = store.pointer()
        previous = pointer.sequence if pointer else 0
        changes = ChangeLog(scope)
        if not changes.exists(previous + 1):
            return None
        state = CatalogState.load(scope, pointer)
        for entry in changes.after(state.seq):
            state.apply(entry)
        frame = state.products_frame(config.attributes)
        catalog = store.write(
            frame,
            source=f"change log to {state.seq}",
            sequence=state.seq,
            files={TIMES_FILE: state.times_file()},
        )
        changes.prune(previous)
        store.prune_versions()  # a tenant written all day would otherwise keep a full copy a minute
        log.info("tenant %s: changes up to %d folded into catalog %s", tenant, state.seq, catalog.version)
        return Compaction(tenant, catalog.version, state.seq, frame.height)
    finally:
        lease.release(n)


class Compactor(BackgroundLoop):
    """Compacts in the background every ``every`` seconds the tenants :meth:`wake` named and those
    ``watched`` returns, when their log holds new entries (see the module docstring). ``fold`` does
    one tenant's compaction (default: :func:`compact` in this process; the search service's runs it in
    a child process, :mod:`aisle.catalog.compaction_child`)."""

    name = "catalog-compactor"

    def __init__(
        self,
        tenants: Tenants,
        *,
        every: float = 60.0,
        watched: Callable[[], Iterable[str]] = tuple,
        owner: str | None = None,
        fold: Callable[[str], Compaction | None] | None = None,
    ) -> None:
        super().__init__(every)
        self.tenants = tenants
        self.watched = watched
        self.owner = owner or process_owner()
        self.fold = fold or (lambda tenant: compact(self.tenants, tenant, owner=self.owner))
        self._woken: set[str] = set()

    def wake(self, tenant: str) -> None:
        """Look at ``tenant`` at the next tick (and at every tick after: it was written here)."""
        self._woken.add(tenant)

    def run_once(self) -> list[Compaction]:
        """One tick: compact every tenant looked at whose log holds new entries; failures are logged and
        retried at the next tick."""
        done: list[Compaction] = []
        for tenant in sorted(self._woken | set(self.watched())):
            try:
                if not pending(self.tenants.scope(tenant)):
                    continue
                folded = self.fold(tenant)
            except TenantNotFound:
                self._woken.discard(tenant)
                continue
            except AisleError as exc:
                log.warning("tenant %s: compaction postponed: %s", tenant, exc.message)
                continue
            except (RuntimeError, OSError, subprocess.SubprocessError) as exc:  # a child that failed
                log.warning("tenant %s: compaction failed, tried again at the next tick: %s", tenant, exc)
                continue
            if folded is not None:
                done.append(folded)
        return done

    def tick(self) -> float:
        self.run_once()
        return self.every
