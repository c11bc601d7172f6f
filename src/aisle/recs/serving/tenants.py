"""Per-tenant state of the predict engine: configuration and the catalog as a product table, cached.

Staleness bounds: a tenant's configuration is re-read at most :data:`CONFIG_TTL_S` seconds after it was
last read; the catalog's current-version pointer at most :data:`CATALOG_TTL_S` seconds after, and the
:class:`~aisle.recs.serving.products.ProductTable` is rebuilt only when the pointer names another version.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from aisle.catalog.store import CatalogNotFound, CatalogStore
from aisle.core.storage import PrefixBlobStore
from aisle.core.tenancy import TenantConfig, Tenants
from aisle.recs.containers import ContainerStore
from aisle.recs.serving import popularity
from aisle.recs.serving.popularity import POPULARITY_TTL_S, ServedPopularity
from aisle.recs.serving.products import ProductTable
from aisle.recs.serving.query import NotWarm

CATALOG_TTL_S = 1.0
CONFIG_TTL_S = 2.0


@dataclass
class ServedTenant:
    """What the engine keeps of one tenant: its storage scope, container and catalog stores, the
    product table of its current catalog (None until first read; ``checked_at`` in monotonic seconds)
    and its popularity artifact (None when it has none; ``popularity_checked_at`` likewise)."""

    scope: PrefixBlobStore
    containers: ContainerStore
    catalog: CatalogStore
    table: ProductTable | None = None
    checked_at: float = 0.0
    popularity: ServedPopularity | None = None
    popularity_checked_at: float | None = None


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
        """The tenant's current catalog as a :class:`ProductTable` (empty when it has no catalog).

        Columns play the roles of the configuration's attributes. Raises NotWarm when ``warm_only``
        and the catalog pointer is due to be read again.
        """
        now = time.monotonic()
        if state.table is not None and now - state.checked_at < CATALOG_TTL_S:
            return state.table
        if warm_only:
            raise NotWarm("catalog")
        version = state.catalog.current_version()
        if state.table is None or state.table.version != (version or ""):
            try:
                catalog = state.catalog.load(version) if version else None
            except CatalogNotFound:
                catalog = None
            roles = {a.role.value: a.name for a in config.attributes.attributes if a.role is not None}
            if catalog is None:
                import polars as pl

                state.table = ProductTable.from_frame("", pl.DataFrame({"id": []}, schema={"id": pl.Utf8}))
            else:
                state.table = ProductTable.from_frame(catalog.version, catalog.products, roles)
        state.checked_at = now
        return state.table

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
