"""Per-tenant state of the predict engine: configuration and the catalog as a product table, cached.

Staleness bounds: a tenant's configuration is re-read at most :data:`CONFIG_TTL_S` seconds after it was
last read; the catalog's current-version pointer at most :data:`CATALOG_TTL_S` seconds after, and the
:class:`~aisle.recs.serving.products.ProductTable` is rebuilt only when the pointer names another version.
Product writes (issue 41) reach the table through the tenant's change log: each pointer check also
applies the entries written since (:meth:`TenantCache.follow`), and the predict service's follower
thread (:class:`~aisle.recs.serving.follower.TableFollower`) does so every
``AISLE_CATALOG_FOLLOW_SECONDS`` in between, so a deleted product leaves every answer within about a
second of its acknowledgement, and within that interval when the thread runs.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import polars as pl

from aisle.catalog.changes import ChangeLog
from aisle.catalog.store import CatalogNotFound, CatalogStore
from aisle.core.storage import PrefixBlobStore
from aisle.core.tenancy import TenantConfig, Tenants
from aisle.recs.containers import ContainerStore
from aisle.recs.serving import popularity
from aisle.recs.serving.popularity import POPULARITY_TTL_S, ServedPopularity
from aisle.recs.serving.products import ProductTable
from aisle.recs.serving.query import NotWarm
from aisle.recs.serving.table_changes import apply_entries

CATALOG_TTL_S = 1.0
CONFIG_TTL_S = 2.0


@dataclass
class ServedTenant:
    """What the engine keeps of one tenant: its storage scope, container and catalog stores, the
    product table of its current catalog (None until first read; ``checked_at`` in monotonic seconds)
    and its popularity artifact (None when it has none; ``popularity_checked_at`` likewise).
    ``table`` is replaced whole, never changed: a request keeps the snapshot it read; ``table_lock``
    serialises the replacements (a pointer check, a follower round)."""

    scope: PrefixBlobStore
    containers: ContainerStore
    catalog: CatalogStore
    table: ProductTable | None = None
    checked_at: float = 0.0
    popularity: ServedPopularity | None = None
    popularity_checked_at: float | None = None
    table_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class TenantCache:
    """The tenants of one object store as the predict engine reads them. Thread-safe.

    Args:
        tenants: tenant lookup (raises TenantNotFound).
    """

    def __init__(self, tenants: Tenants) -> None:
        self.tenants = tenants
        self._state: dict[str, ServedTenant] = {}
        self._configs: dict[str, tuple[float, TenantConfig]] = {}
        self._lock = threading.Lock()

    def entry_count(self) -> int:
        """Tenants served (their containers, catalog table)."""
        return len(self._state)

    def get(self, tenant: str, *, warm_only: bool = False) -> tuple[TenantConfig, ServedTenant]:
        """The tenant's configuration (at most :data:`CONFIG_TTL_S` old) and its :class:`ServedTenant`.

        Raises TenantNotFound (404), ConfigInvalid (503); NotWarm when ``warm_only`` and the
        configuration is stale.
        """
        now = time.monotonic()
        hit = self._configs.get(tenant)
        if hit is not None and now - hit[0] < CONFIG_TTL_S:
            config = hit[1]
        elif warm_only:
            raise NotWarm(tenant)
        else:
            config = self.tenants.config(tenant)
            self._configs[tenant] = (now, config)
        state = self._state.get(tenant)
        if state is None:
            with self._lock:
                state = self._state.get(tenant)
                if state is None:
                    scope = self.tenants.scope(tenant)
                    state = ServedTenant(scope, ContainerStore(scope), CatalogStore(scope))
                    self._state[tenant] = state
        return config, state

    def table(self, config: TenantConfig, state: ServedTenant, *, warm_only: bool = False) -> ProductTable:
        """The tenant's current catalog as a :class:`ProductTable` (empty when it has no catalog), with
        the change-log entries written since its version applied.

        Columns play the roles of the configuration's attributes. Every :data:`CATALOG_TTL_S` seconds
        the pointer is read (a new version is loaded) and the log followed. Raises NotWarm when
        ``warm_only`` and that is due; StorageUnavailable (503) when the bucket fails then. While
        another thread reads the bucket for the tenant (a follower round), the current snapshot is
        served and the check left to the next request.
        """
        now = time.monotonic()
        if state.table is not None and now - state.checked_at < CATALOG_TTL_S:
            return state.table
        if warm_only:
            raise NotWarm("catalog")
        if not state.table_lock.acquire(blocking=state.table is None):
            assert state.table is not None
            return state.table
        try:
            if state.table is not None and time.monotonic() - state.checked_at < CATALOG_TTL_S:
                return state.table
            pointer = state.catalog.pointer()
            version = pointer.version if pointer is not None else ""
            table = state.table
            if table is None or table.version != version:
                table = self._load(config, state, version, pointer.sequence if pointer is not None else 0)
            state.table = apply_entries(table, ChangeLog(state.scope).after(table.seq))
            state.checked_at = now
            return state.table
        finally:
            state.table_lock.release()

    @staticmethod
    def _load(config: TenantConfig, state: ServedTenant, version: str, seq: int) -> ProductTable:
        """The table of catalog ``version`` (which includes the log up to ``seq``); empty without one."""
        try:
            catalog = state.catalog.load(version) if version else None
        except CatalogNotFound:
            catalog = None
        attributes = config.attributes.attributes
        roles = {a.role.value: a.name for a in attributes if a.role is not None}
        if catalog is None:  # the tenant's attributes as empty columns: products written later fill them
            empty = pl.DataFrame(schema={"id": pl.Utf8, **{a.name: pl.Utf8 for a in attributes}})
            return ProductTable.from_frame("", empty, roles, seq=seq if version else 0)
        return ProductTable.from_frame(catalog.version, catalog.products, roles, seq=seq)

    def follow(self, tenant: str) -> int | None:
        """Apply the change-log entries written since the tenant's table (one GET each, and one that
        finds none); returns the sequence the table now reflects, None when no table is loaded yet.

        A follower's only step: a new catalog version (and a log pruned past the table) is picked up by
        the next pointer check of :meth:`table`. Raises StorageUnavailable (503).
        """
        state = self._state.get(tenant)
        if state is None or state.table is None:
            return None
        with state.table_lock:
            table = state.table
            state.table = apply_entries(table, ChangeLog(state.scope).after(table.seq))
            return state.table.seq

    def loaded(self) -> list[str]:
        """The tenants whose product table is loaded."""
        return [t for t, s in list(self._state.items()) if s.table is not None]

    def popularity(self, state: ServedTenant, *, warm_only: bool = False) -> ServedPopularity | None:
        """The tenant's popularity artifact (:mod:`aisle.recs.serving.popularity`), None without one.

        The pointer is read again at most every :data:`POPULARITY_TTL_S` seconds. Raises NotWarm when
        ``warm_only`` and it is due to be read.
        """
        now = time.monotonic()
        checked = state.popularity_checked_at
        if checked is not None and now - checked < POPULARITY_TTL_S:
            return state.popularity
        if warm_only:
            raise NotWarm("popularity")
        state.popularity = popularity.load(state.scope, state.popularity)
        state.popularity_checked_at = now
        return state.popularity

    def storage_is_local(self) -> bool:
        """True when the tenants' storage is a local directory (its reads are cheap enough inline)."""
        return self.tenants.store.local_path("") is not None
