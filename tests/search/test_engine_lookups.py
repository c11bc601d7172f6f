"""One search looks the tenant's configuration up once (issue 27: three times: the event-loop check,
the index lookup and the search each read it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aisle.core.storage import open_blob_store
from aisle.core.tenancy import TenantConfig, Tenants
from aisle.search.engine import SearchEngine
from aisle.search.indexes import IndexRegistry
from aisle.search.query import SearchQuery
from aisle.search.ranking.store import RankerStore
from aisle.search.rules.book import RuleBooks
from aisle.vectors.search import VectorSearch
from aisle.vectors.store import VectorStore


class CountingTenants(Tenants):
    """The tenants' configuration, counting the lookups."""

    lookups = 0

    def config(self, tenant: str) -> TenantConfig:
        self.lookups += 1
        return super().config(tenant)


def test_a_search_reads_the_configuration_once(demo_env: Any, tmp_path: Path) -> None:
    store = open_blob_store(demo_env.storage_url)
    tenants = CountingTenants(store, ttl=3600)  # no expiry between two lookups on a loaded machine
    engine = SearchEngine(
        tenants,
        IndexRegistry(tenants, demo_env.data_dir, check_every=3600),
        VectorSearch(VectorStore(tmp_path / "no-vectors")),
        rules=RuleBooks(store),
        rankers=RankerStore(store),
    )
    engine.search("fashion", SearchQuery("warm up"))  # opens the index
    for query in (SearchQuery("red shoes", facets=["brand"]), SearchQuery("watch", size=0)):
        tenants.lookups = 0
        ready = engine.readiness("fashion")  # as the search service does before each search
        assert not ready.waits and ready.found is not None
        result = engine.search("fashion", query, config=ready.found)
        assert result.total > 0
        assert tenants.lookups == 1
    tenants.lookups = 0
    engine.search("fashion", SearchQuery("red shoes"))  # a caller without one: looked up here, once
    assert tenants.lookups == 1
