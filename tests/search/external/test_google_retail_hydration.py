"""Google's id-only results become Aisle's search response, products hydrated from the tenant's catalog:
the fashion demo tenant's products held by Google's stand-in, answered through GoogleRetailSearch."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from tests.conftest import require
from tests.search.external.conftest import HAS_GOOGLE

from aisle.core.crs_config import GoogleRetailBackendConfig
from aisle.core.tenancy import Tenants
from aisle.search.external.hydrate import external_search_result
from aisle.search.external.protocol import ExternalSearchRequest
from aisle.search.index.reader import TenantIndex
from aisle.search.indexes import IndexRegistry

SAMPLE = 40


@pytest.fixture(scope="module")
def fashion_index(demo_env: Any) -> TenantIndex:
    return IndexRegistry(Tenants(demo_env.store), demo_env.data_dir).get("fashion")


@pytest.fixture
def fashion_google(fashion_index: TenantIndex) -> Iterator[tuple[Any, Any, list[dict[str, Any]]]]:
    """The stand-in holding the first :data:`SAMPLE` fashion products, one more Aisle lacks, and a backend."""
    require(HAS_GOOGLE, "google-cloud-retail is not installed (pip install '.[google]')")
    from tests.support.google_retail_search import retail_product
    from tests.support.google_retail_standin import GoogleStandin, backend_config

    from aisle.search.external.external_search_google import GoogleRetailSearch

    rows = [dict(r) for r in fashion_index.rows[:SAMPLE]]
    unknown = {**rows[0], "id": "not-in-aisle"}  # Google's catalog can run ahead of Aisle's
    products = [retail_product(r) for r in [unknown, *rows]]
    words = rows[0]["title"].split()
    misspelt = words[0][::-1].lower()
    with GoogleStandin(
        products, corrections={misspelt: words[0].lower()}, redirects={"gift cards": "/gift-cards"}
    ) as standin:
        backend = GoogleRetailSearch(GoogleRetailBackendConfig.model_validate(backend_config(standin)))
        yield standin, backend, rows
        backend.close()


def test_ids_become_the_catalogs_products(fashion_google: Any, fashion_index: TenantIndex) -> None:
    _, backend, rows = fashion_google
    title = rows[0]["title"]
    result = backend.search(ExternalSearchRequest(query=title, size=10))
    assert result.products[0].id == "not-in-aisle" and result.products[1].id == rows[0]["id"]
    response = external_search_result(result, fashion_index, title)
    assert response.products[0]["id"] == rows[0]["id"]  # the unknown id is dropped, not invented
    assert response.products[0]["title"] == title
    assert all(p["id"] != "not-in-aisle" for p in response.products)
    assert response.query_graph.external is not None
    # Google's token rides in queryGraph.external; the response's own is Aisle's, set by the service
    assert response.query_graph.external.attribution_token == result.attribution_token
    assert result.attribution_token and response.attribution_token is None
    assert response.query_graph.external.backend == "google_retail"


def test_corrected_query_and_redirect_reach_the_response(
    fashion_google: Any, fashion_index: TenantIndex
) -> None:
    _, backend, rows = fashion_google
    misspelt = rows[0]["title"].split()[0][::-1].lower()
    corrected = external_search_result(
        backend.search(ExternalSearchRequest(query=misspelt)), fashion_index, misspelt
    )
    assert corrected.corrected_query == rows[0]["title"].split()[0].lower()
    assert corrected.products and corrected.total >= 1
    body = corrected.model_dump(by_alias=True)
    assert body["correctedQuery"] == corrected.corrected_query
    assert body["queryGraph"]["external"]["attribution_token"]
    redirect = external_search_result(
        backend.search(ExternalSearchRequest(query="gift cards")), fashion_index, "gift cards"
    )
    assert redirect.redirect == "/gift-cards" and redirect.products == []
