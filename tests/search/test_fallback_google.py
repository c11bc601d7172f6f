"""The search pipeline's fallback stage with a google_retail backend: Google finds, among the tenant's
own products, what Aisle's retrieval cannot (here: its spell correction maps "torch" to "headlamp"), and
Aisle shows them; Google failing never fails the search."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import require
from tests.search.external.conftest import HAS_GOOGLE
from tests.search.external.contract import CATALOG
from tests.support.external_google import write_google_tenant

from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.search.external.registry import ExternalSearches
from aisle.search.indexes import IndexRegistry
from aisle.search.model import SearchResult
from aisle.search.pipeline import SearchPipeline, default_stages
from aisle.search.query import SearchQuery


@pytest.fixture
def shop(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    """``(standin, search)``: the stand-in and ``search(query) -> SearchResult`` on the tenant."""
    require(HAS_GOOGLE, "google-cloud-retail is not installed (pip install '.[google]')")
    from tests.support.google_retail_search import retail_product
    from tests.support.google_retail_standin import GoogleStandin, backend_config

    store = open_blob_store(f"file://{tmp_path / 'bucket'}")
    with GoogleStandin([retail_product(p) for p in CATALOG], corrections={"torch": "headlamp"}) as standin:
        fallback = {"timeout_ms": 300, "cache_ttl_s": 0, "breaker": {"fail_max": 2, "reset_timeout_s": 60}}
        write_google_tenant(store, "shop", backend_config(standin), **fallback)
        tenants = Tenants(store, ttl=0)
        indexes, external = IndexRegistry(tenants, tmp_path / "data"), ExternalSearches()
        pipeline = SearchPipeline(default_stages(external=external), budget_s=2.0)

        def search(query: str) -> SearchResult:
            return pipeline.search(indexes.get("shop"), tenants.config("shop"), SearchQuery(query))

        yield standin, search
        external.close()


def test_google_answers_what_aisle_cannot(shop: tuple[Any, Any]) -> None:
    _, search = shop
    result = search("torch")
    assert [p["id"] for p in result.products] == ["ext-11"] and result.products[0]["title"] == "Headlamp"
    graph = result.query_graph.external
    assert graph is not None and (graph.status, graph.reason, graph.backend) == (
        "answered",
        "no_results",
        "google_retail",
    )


def test_google_down_never_fails_the_search(shop: tuple[Any, Any]) -> None:
    standin, search = shop
    standin.fail(503, times=2)
    for _ in range(2):
        graph = search("torch").query_graph.external
        assert graph is not None and (graph.status, graph.code) == ("failed", "external_search_unavailable")
    calls = len(standin.requests)
    result = search("torch")  # the breaker opened after two failures: Google is not asked
    assert result.products == [] and len(standin.requests) == calls
    graph = result.query_graph.external
    assert graph is not None and (graph.status, graph.reason) == ("skipped", "breaker_open")


def test_google_slow_is_cut_at_the_budget(shop: tuple[Any, Any]) -> None:
    standin, search = shop
    standin.slow(2.0)
    graph = search("torch").query_graph.external
    assert graph is not None and (graph.status, graph.code) == ("failed", "external_search_timeout")
    assert [p["id"] for p in search("torch").products] == ["ext-11"]  # the next search is answered
