"""GoogleRetailSearch through google-cloud-retail / -vision's REST transport against Google's stand-in."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from tests.search.external.conftest import COLOURS, png

from aisle.core.crs_config import CrsConfig, GoogleRetailBackendConfig
from aisle.core.errors import BadRequest
from aisle.search.external.errors import (
    ExternalSearchAuthFailed,
    ExternalSearchRateLimited,
    ExternalSearchRejected,
    ExternalSearchTimeout,
    ExternalSearchUnavailable,
    ExternalSearchUnsupported,
)
from aisle.search.external.protocol import (
    ExternalCompleteRequest,
    ExternalImageRequest,
    ExternalSearch,
    ExternalSearchRequest,
)
from aisle.search.model import FilterSpec


def open_backend(standin: Any, **extra: Any) -> Any:
    from tests.support.google_retail_standin import backend_config

    from aisle.search.external.resolver import open_external_search

    crs = CrsConfig.model_validate({"enabled": True, "backend": backend_config(standin, **extra)})
    return open_external_search(crs)


@pytest.fixture
def backend(standin: Any) -> Any:
    search = open_backend(standin)
    yield search
    search.close()


def ids(result: Any) -> list[str]:
    return [p.id for p in result.products]


def test_the_resolver_opens_the_google_backend(backend: Any) -> None:
    assert isinstance(backend, ExternalSearch)
    assert backend.name == "google_retail"


def test_search_translates_filters_facets_sort_and_visitor(backend: Any, standin: Any) -> None:
    request = ExternalSearchRequest(
        query="running",
        filters=(
            FilterSpec(field="price", value={"gte": 20, "lt": 90}),
            FilterSpec(field="material", value="mesh"),
        ),
        facets=("brand", "price"),
        sort="price_desc",
        size=10,
        visitor_id="v-42",
    )
    result = backend.search(request)
    assert ids(result) == ["p5", "p2", "p1"]  # running + mesh + 20 <= price < 90, dearest first
    assert result.total == 3 and result.backend == "google_retail"
    assert all(p.fields is None for p in result.products)  # ids only: callers hydrate
    assert result.facets["brand"][0].model_dump() == {"value": "Adidas", "count": 1}
    assert {v.value for v in result.facets["brand"]} == {"Adidas", "Nike", "Puma"}
    assert [(v.value, v.count) for v in result.facets["price"]] == [("25-50", 1), ("50-100", 2)]
    assert result.attribution_token
    method, path, body = standin.requests[-1]
    assert (method, path) == (
        "POST",
        "/v2/projects/aisle-test/locations/global/catalogs/default_catalog/servingConfigs/default_search:search",
    )
    assert body["visitorId"] == "v-42" and body["pageSize"] == 10 and body["orderBy"] == "price desc"
    assert body["filter"] == 'price: IN(20.0i, 90.0e) AND attributes.material: ANY("mesh")'
    assert [s["facetKey"]["key"] for s in body["facetSpecs"]] == ["brands", "price"]


def test_paging_with_offset(backend: Any) -> None:
    everything = backend.search(ExternalSearchRequest(query="running", sort="price_asc", size=10))
    page = backend.search(ExternalSearchRequest(query="running", sort="price_asc", offset=2, size=2))
    assert ids(page) == ids(everything)[2:4]
    assert page.total == everything.total == 5


def test_size_zero_counts_without_products(backend: Any) -> None:
    result = backend.search(ExternalSearchRequest(query="nike", size=0, facets=("color",)))
    assert result.products == [] and result.total == 3
    assert {v.value: v.count for v in result.facets["color"]} == {"Red": 2, "Black": 1}


def test_an_empty_query_browses_the_category_filters_pages(backend: Any, standin: Any) -> None:
    shoes = FilterSpec(field="category", value="Footwear > Shoes")
    result = backend.search(ExternalSearchRequest(query="", filters=(shoes,), sort="price_asc"))
    assert ids(result) == ["p1", "p2", "p5"]
    assert standin.requests[-1][2]["pageCategories"] == ["Footwear > Shoes"]
    backend.search(ExternalSearchRequest(query="shoe", filters=(shoes,)))
    assert "pageCategories" not in standin.requests[-1][2]  # a text query is no category page


def test_corrected_query_and_redirect_are_carried(backend: Any) -> None:
    corrected = backend.search(ExternalSearchRequest(query="nkie cap"))
    assert corrected.corrected_query == "nike cap" and ids(corrected) == ["p3"]
    redirect = backend.search(ExternalSearchRequest(query="gift cards"))
    assert redirect.redirect_uri == "https://shop.example/gift-cards" and redirect.products == []


def test_quoted_values_reach_google_intact(backend: Any) -> None:
    result = backend.search(
        ExternalSearchRequest(query="speed", filters=(FilterSpec(field="brand", value="Puma"),))
    )
    assert ids(result) == ["p5"]


def test_a_filter_without_retail_key_is_refused_before_any_call(backend: Any, standin: Any) -> None:
    with pytest.raises(BadRequest) as err:
        backend.search(ExternalSearchRequest(query="x", filters=(FilterSpec(field="size-eu", value="42"),)))
    assert err.value.status == 400 and standin.requests == []


def test_complete(backend: Any, standin: Any) -> None:
    suggestions = backend.complete(ExternalCompleteRequest(prefix="nik", size=3, visitor_id="v-1"))
    assert suggestions and len(suggestions) <= 3
    assert all(s.text.startswith("nik") for s in suggestions)
    _, path, query = standin.requests[-1]
    assert path.endswith("/catalogs/default_catalog:completeQuery")
    assert query["query"] == ["nik"] and query["maxSuggestions"] == ["3"] and query["visitorId"] == ["v-1"]


def test_image_search_through_vision_product_search(backend: Any, standin: Any) -> None:
    result = backend.search_image(ExternalImageRequest(image=png(COLOURS["p2"], stripe=True), size=3))
    assert ids(result)[0] == "p2"  # the blue shoe looks most like a blue photo
    scores = [p.score for p in result.products]
    assert len(scores) == 3 and scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)
    params = standin.requests[-1][2]["requests"][0]["imageContext"]["productSearchParams"]
    assert params["productSet"].endswith("/productSets/catalog") and params["productCategories"] == [
        "apparel-v2"
    ]


def test_image_search_filters_become_product_labels(backend: Any, standin: Any) -> None:
    red = png(COLOURS["p1"])
    result = backend.search_image(
        ExternalImageRequest(
            image=red, size=5, filters=(FilterSpec(field="brand", value=["Adidas", "Puma"]),)
        )
    )
    assert set(ids(result)) == {"p2", "p5", "p6"}
    params = standin.requests[-1][2]["requests"][0]["imageContext"]["productSearchParams"]
    assert params["filter"] == "(brand = Adidas OR brand = Puma)"


def test_image_search_without_vision_is_unsupported(standin: Any) -> None:
    backend = open_backend(standin, vision=False)
    with pytest.raises(ExternalSearchUnsupported) as err:
        backend.search_image(ExternalImageRequest(image=png((1, 2, 3))))
    assert err.value.status == 409 and standin.requests == []


def test_vision_error_inside_a_200_answer(backend: Any) -> None:
    with pytest.raises(ExternalSearchRejected) as err:
        backend.search_image(ExternalImageRequest(image=b"not an image"))
    assert err.value.status == 400 and not err.value.counts_as_failure


CALLS = {
    "search": lambda b, t: b.search(ExternalSearchRequest(query="nike", timeout_s=t)),
    "complete": lambda b, t: b.complete(ExternalCompleteRequest(prefix="ni", timeout_s=t)),
    "image": lambda b, t: b.search_image(ExternalImageRequest(image=png((9, 9, 9)), timeout_s=t)),
}


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize(
    ("status", "error", "code"),
    [
        (401, ExternalSearchAuthFailed, "external_search_auth_failed"),
        (403, ExternalSearchAuthFailed, "external_search_auth_failed"),
        (429, ExternalSearchRateLimited, "external_search_rate_limited"),
        (503, ExternalSearchUnavailable, "external_search_unavailable"),
        (500, ExternalSearchUnavailable, "external_search_unavailable"),
        (400, ExternalSearchRejected, "external_search_rejected"),
        (404, ExternalSearchUnavailable, "external_search_unavailable"),  # a wrong catalog or serving config
    ],
)
def test_google_error_statuses(
    backend: Any, standin: Any, call: str, status: int, error: type, code: str
) -> None:
    standin.fail(status)
    with pytest.raises(error) as err:
        CALLS[call](backend, 2.0)
    assert err.value.code == code
    CALLS[call](backend, 2.0)  # one failure is not retried by the backend, and leaves it usable


@pytest.mark.parametrize("call", CALLS)
def test_a_slow_answer_times_out_within_the_call_budget(backend: Any, standin: Any, call: str) -> None:
    released = standin.hold()
    try:
        # the answer is held until after the call returns: a backend waiting for it gets no timeout
        with pytest.raises(ExternalSearchTimeout) as err:
            CALLS[call](backend, 0.3)
    finally:
        released.set()
    assert err.value.status == 504
    assert "within 0.3 s" in err.value.message  # gave up on the call's own budget


def test_nobody_listening_is_unavailable(standin: Any) -> None:
    from tests.support.google_retail_standin import backend_config

    config = backend_config(standin)
    with socket.socket() as sock:  # a port nobody listens on: bound, then released
        sock.bind(("127.0.0.1", 0))
        config["endpoint"] = f"127.0.0.1:{sock.getsockname()[1]}"
    backend = open_backend_from(config)
    with pytest.raises(ExternalSearchUnavailable):
        backend.search(ExternalSearchRequest(query="nike", timeout_s=1.0))


def open_backend_from(config: dict[str, Any]) -> Any:
    from aisle.search.external.external_search_google import GoogleRetailSearch

    return GoogleRetailSearch(GoogleRetailBackendConfig.model_validate(config))
