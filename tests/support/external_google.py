"""A tenant whose Aisle catalog is the contract catalog and whose crs_config.json names a google_retail
backend: Google holds the same products (a retailer's catalog synced to Retail), so the ids it returns
are shown as the tenant's own products."""

from __future__ import annotations

from typing import Any

import polars as pl
from tests.search.external.contract import CATALOG
from tests.support.external import attributes

from aisle.core.crs_config import CrsConfig
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import AutocompleteConfiguration, GlobalConfiguration, UserGroupConfiguration


def write_google_tenant(store: BlobStore, name: str, backend: dict[str, Any], **fallback: Any) -> None:
    """Create ``name`` with :data:`CATALOG` as its catalog and ``backend`` with these fallback settings."""
    from aisle.catalog.store import CatalogStore

    crs = CrsConfig.model_validate({"enabled": True, "backend": backend, "fallback": fallback})
    tenants = Tenants(store)
    tenants.write_config(
        name,
        {
            "attribute_configuration.json": attributes(),
            "autocomplete_configuration.json": AutocompleteConfiguration(),
            "crs_config.json": crs,
            "global_configuration.json": GlobalConfiguration(),
            "user_group_configuration.json": UserGroupConfiguration(),
        },
    )
    CatalogStore(tenants.scope(name)).write(pl.DataFrame(CATALOG), source="test")
