"""The contract every external retail search backend keeps (``aisle.search.external.protocol``).

One suite, run against each backend (like haystack's ``haystack/testing/document_store.py``): a backend's
test module subclasses :class:`ExternalSearchContract` and gives a ``harness`` fixture returning a
:class:`BackendHarness` whose backends serve :data:`CATALOG` (Typesense: a real server loaded with it;
Google Cloud Retail: the local stand-in of the REST endpoints answering from it).

Assertions are what a shopper or the fallback stage would notice, and hold for any relevance model:
a word only one product has finds it, nonsense finds nothing, pages do not overlap, filters and sorts
hold on every result, facet counts add up, failures come as the protocol's errors.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from aisle.search.external.errors import (
    ExternalSearchAuthFailed,
    ExternalSearchTimeout,
    ExternalSearchUnavailable,
    ExternalSearchUnsupported,
)
from aisle.search.external.protocol import (
    ExternalCompleteRequest,
    ExternalImageRequest,
    ExternalProduct,
    ExternalSearch,
    ExternalSearchRequest,
)
from aisle.search.model import FilterSpec

CATALOG: list[dict[str, Any]] = [
    {"id": "ext-1", "title": "Trail running shoe", "brand": "Salomon", "color": "Blue", "price": 120.0},
    {"id": "ext-2", "title": "Road running shoe", "brand": "Asics", "color": "Black", "price": 95.0},
    {"id": "ext-3", "title": "Running socks", "brand": "Asics", "color": "White", "price": 12.0},
    {"id": "ext-4", "title": "Rain jacket", "brand": "Patagonia", "color": "Yellow", "price": 180.0},
    {"id": "ext-5", "title": "Fleece jacket", "brand": "Patagonia", "color": "Blue", "price": 99.0},
    {"id": "ext-6", "title": "Hiking boot", "brand": "Salomon", "color": "Brown", "price": 150.0},
    {"id": "ext-7", "title": "Wool beanie", "brand": "Smartwool", "color": "Grey", "price": 25.0},
    {"id": "ext-8", "title": "Running shorts", "brand": "Nike", "color": "Black", "price": 35.0},
    {"id": "ext-9", "title": "Yoga mat", "brand": "Manduka", "color": "Purple", "price": 88.0},
    {"id": "ext-10", "title": "Camping stove", "brand": "Jetboil", "color": "Orange", "price": 110.0},
    {"id": "ext-11", "title": "Headlamp", "brand": "Petzl", "color": "Black", "price": 45.0},
    {"id": "ext-12", "title": "Running cap", "brand": "Nike", "color": "White", "price": 22.0},
]
"""The contract catalog: fields title (searched), brand, color (filterable, facetable), price (sortable)."""

BY_ID = {p["id"]: p for p in CATALOG}
RUNNING = {p["id"] for p in CATALOG if "running" in p["title"].lower()}


CALL_S = 10.0
"""The timeout of each call the contract makes, except those about timeouts: generous, since a loaded CI
machine (two test workers on two cores) can take more than the production default of 0.8 s to answer a
first call, token exchange included, from a stand-in server in the same process."""


@dataclass
class BackendHarness:
    """How a backend's test module hands its backends to the contract.

    ``backend``: over :data:`CATALOG`. ``unreachable``: pointed at a port nobody listens on.
    ``silent``: pointed at a server that accepts connections and never answers. ``wrong_credentials``:
    the real service with a key it refuses. ``supports_images``: whether ``search_image`` answers.
    ``image``: a JPEG or PNG to search with when it does.
    """

    backend: ExternalSearch
    unreachable: Callable[[], ExternalSearch]
    silent: Callable[[], ExternalSearch]
    wrong_credentials: Callable[[], ExternalSearch]
    supports_images: bool = False
    image: bytes = b""


def fields(product: ExternalProduct) -> dict[str, Any]:
    """A result's fields: its own, or the catalog's when the backend returned the id only."""
    return product.fields if product.fields is not None else BY_ID[product.id]


def ids(products: list[ExternalProduct]) -> list[str]:
    return [p.id for p in products]


class ExternalSearchContract:
    """Subclass in a backend's test module and define the ``harness`` fixture."""

    def test_a_word_one_product_has_finds_it(self, harness: BackendHarness) -> None:
        result = harness.backend.search(ExternalSearchRequest(timeout_s=CALL_S, query="headlamp"))
        assert ids(result.products)[:1] == ["ext-11"]
        assert result.total >= 1
        assert result.backend == harness.backend.name

    def test_matches_are_catalog_products(self, harness: BackendHarness) -> None:
        result = harness.backend.search(ExternalSearchRequest(timeout_s=CALL_S, query="running", size=20))
        assert set(ids(result.products)) == RUNNING
        assert result.total == len(RUNNING)

    def test_nonsense_finds_nothing(self, harness: BackendHarness) -> None:
        result = harness.backend.search(ExternalSearchRequest(timeout_s=CALL_S, query="qzxv wplk"))
        assert result.products == [] and result.total == 0

    def test_pages_do_not_overlap(self, harness: BackendHarness) -> None:
        first = harness.backend.search(
            ExternalSearchRequest(timeout_s=CALL_S, query="running", size=2, offset=0)
        )
        second = harness.backend.search(
            ExternalSearchRequest(timeout_s=CALL_S, query="running", size=2, offset=2)
        )
        assert len(first.products) == 2 and len(second.products) == 2
        assert not set(ids(first.products)) & set(ids(second.products))
        assert first.total == second.total == len(RUNNING)

    def test_size_zero_counts_only(self, harness: BackendHarness) -> None:
        result = harness.backend.search(ExternalSearchRequest(timeout_s=CALL_S, query="running", size=0))
        assert result.products == [] and result.total == len(RUNNING)

    def test_keyword_filter_holds_on_every_result(self, harness: BackendHarness) -> None:
        wanted = ExternalSearchRequest(
            timeout_s=CALL_S, query="running", filters=(FilterSpec(field="brand", value="Asics"),)
        )
        result = harness.backend.search(wanted)
        assert set(ids(result.products)) == {"ext-2", "ext-3"}

    def test_filter_values_are_or(self, harness: BackendHarness) -> None:
        spec = FilterSpec(field="color", value=["White", "Blue"])
        result = harness.backend.search(
            ExternalSearchRequest(timeout_s=CALL_S, query="running", filters=(spec,))
        )
        assert {fields(p)["color"] for p in result.products} <= {"White", "Blue"}
        assert set(ids(result.products)) == {"ext-1", "ext-3", "ext-12"}

    def test_price_range_filter(self, harness: BackendHarness) -> None:
        spec = FilterSpec(field="price", value={"gte": 20, "lt": 100})
        result = harness.backend.search(
            ExternalSearchRequest(timeout_s=CALL_S, query="running", filters=(spec,))
        )
        assert set(ids(result.products)) == {"ext-2", "ext-8", "ext-12"}

    def test_price_sort(self, harness: BackendHarness) -> None:
        up = harness.backend.search(
            ExternalSearchRequest(timeout_s=CALL_S, query="running", sort="price_asc")
        )
        down = harness.backend.search(
            ExternalSearchRequest(timeout_s=CALL_S, query="running", sort="price_desc")
        )
        prices = [fields(p)["price"] for p in up.products]
        assert prices == sorted(prices) and len(prices) == len(RUNNING)
        assert [fields(p)["price"] for p in down.products] == sorted(prices, reverse=True)

    def test_facet_counts_add_up(self, harness: BackendHarness) -> None:
        result = harness.backend.search(
            ExternalSearchRequest(timeout_s=CALL_S, query="running", facets=("brand",))
        )
        counts = {v.value: v.count for v in result.facets["brand"]}
        assert counts == {"Asics": 2, "Nike": 2, "Salomon": 1}

    def test_complete_gives_completions_of_the_prefix(self, harness: BackendHarness) -> None:
        found = harness.backend.complete(ExternalCompleteRequest(timeout_s=CALL_S, prefix="runn", size=3))
        assert 1 <= len(found) <= 3
        assert all(s.text.lower().startswith("runn") or "runn" in s.text.lower() for s in found)

    def test_image_search_answers_or_says_unsupported(self, harness: BackendHarness) -> None:
        if not harness.supports_images:
            with pytest.raises(ExternalSearchUnsupported):
                harness.backend.search_image(
                    ExternalImageRequest(timeout_s=CALL_S, image=b"\x89PNG\r\n\x1a\n")
                )
            return
        result = harness.backend.search_image(
            ExternalImageRequest(timeout_s=CALL_S, image=harness.image, size=3)
        )
        assert 1 <= len(result.products) <= 3
        assert set(ids(result.products)) <= set(BY_ID)

    def test_unreachable_is_unavailable(self, harness: BackendHarness) -> None:
        backend = harness.unreachable()
        try:
            with pytest.raises(ExternalSearchUnavailable):
                backend.search(ExternalSearchRequest(query="headlamp", timeout_s=1.0))
            with pytest.raises(ExternalSearchUnavailable):
                backend.complete(ExternalCompleteRequest(prefix="he", timeout_s=1.0))
        finally:
            backend.close()

    def test_silent_service_times_out_within_the_budget(self, harness: BackendHarness) -> None:
        backend = harness.silent()
        try:
            with pytest.raises(ExternalSearchTimeout) as caught:
                backend.search(ExternalSearchRequest(query="headlamp", timeout_s=0.3))
            # the timeout path with the call's own budget (its HTTP timeout), not a default of the client
            assert re.search(r"within 0\.30* s", caught.value.message), caught.value.message
        finally:
            backend.close()

    def test_refused_credentials_are_auth_failed(self, harness: BackendHarness) -> None:
        backend = harness.wrong_credentials()
        try:
            with pytest.raises(ExternalSearchAuthFailed):
                backend.search(ExternalSearchRequest(timeout_s=CALL_S, query="headlamp"))
        finally:
            backend.close()

    def test_close_is_idempotent(self, harness: BackendHarness) -> None:
        backend = harness.unreachable()
        backend.close()
        backend.close()
