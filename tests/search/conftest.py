"""Fixtures shared by the search tests."""

from __future__ import annotations

import pytest

from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.search.index.reader import TenantIndex
from aisle.search.indexes import IndexRegistry


@pytest.fixture(scope="session")
def homedepot(demo_env) -> tuple[Tenants, TenantIndex]:  # type: ignore[no-untyped-def]
    """The Home Depot demo tenant and its loaded index, shared so the ranker's token table
    (:class:`~aisle.search.ranking.features.DocTerms`, seconds to build) is built once per session."""
    tenants = Tenants(open_blob_store(demo_env.storage_url), ttl=0)
    return tenants, IndexRegistry(tenants, demo_env.data_dir).get("homedepot")
