"""GET /metrics (services/common/metrics.py): per-route latency, per-tenant counts, cache sizes, gauges."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from tests.services.common.conftest import predict_app, search_app

from aisle.core.config import Settings

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(client: TestClient) -> Samples:
    resp = client.get("/metrics")
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/plain")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(resp.text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def requests_of(samples: Samples, **labels: str) -> float:
    """Requests counted by the latency histogram (its _count) whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(
        v
        for (name, have), v in samples.items()
        if name == "aisle_http_request_duration_seconds_count" and wanted <= have
    )


@pytest.fixture
def search(settings: Settings) -> Iterator[TestClient]:
    with TestClient(search_app(settings)) as client:
        yield client


@pytest.fixture
def predict(settings: Settings) -> Iterator[TestClient]:
    with TestClient(predict_app(settings)) as client:
        yield client


def test_requests_are_counted_by_route_template_never_by_raw_path(search: TestClient) -> None:
    for product in ("p1", "p2", "nosuch"):
        search.get(f"/item/{product}", params={"tenant": "shop"})
    search.get("/no/such/path")
    search.request("BREW", "/health")
    samples = scrape(search)
    route = "/item/{product_id}"
    assert requests_of(samples, service="search", method="GET", route=route, status="200") == 2
    assert requests_of(samples, route=route, status="404") == 1
    assert requests_of(samples, route="unmatched", status="404") == 1
    assert requests_of(samples, method="other", route="/health", status="405") == 1
    assert not any("/item/p1" in dict(labels).get("route", "") for _, labels in samples)
    buckets = {
        dict(labels)["le"]
        for name, labels in samples
        if name == "aisle_http_request_duration_seconds_bucket" and dict(labels)["route"] == route
    }
    assert {"0.001", "1.0", "+Inf"} <= buckets


def test_searches_and_predictions_are_counted_per_known_tenant(
    search: TestClient, predict: TestClient
) -> None:
    for _ in range(2):
        assert (
            predict.post(
                "/predict", params={"tenant": "shop"}, json={"containerId": "c1", "productIds": ["p0"]}
            ).status_code
            == 200
        )
    for name in ("ghost", "spook", "x" * 60):  # unknown names must not each become a series
        predict.post("/predict", params={"tenant": name}, json={"containerId": "c1", "productIds": ["p0"]})
    samples = scrape(predict)
    assert (
        value(samples, "aisle_tenant_requests_total", service="predict", operation="predict", tenant="shop")
        == 2
    )
    assert (
        value(samples, "aisle_tenant_requests_total", service="predict", operation="predict", tenant="_other")
        == 3
    )
    assert not any(dict(labels).get("tenant") == "ghost" for _, labels in samples)

    assert search.post("/search", json={"tenant": "shop", "query": "product"}).status_code == 200
    assert search.get("/search", params={"tenant": "shop", "q": "product"}).status_code == 200
    samples = scrape(search)
    assert (
        value(samples, "aisle_tenant_requests_total", service="search", operation="search", tenant="shop")
        == 2
    )


def test_cache_sizes_are_read_at_scrape_time(predict: TestClient) -> None:
    before = scrape(predict)
    assert value(before, "aisle_cache_entries", service="predict", cache="containers") == 0
    predict.post("/predict", params={"tenant": "shop"}, json={"containerId": "c1", "productIds": ["p0"]})
    after = scrape(predict)
    for cache in ("containers", "models", "tenant_configs", "tenants_served"):
        assert value(after, "aisle_cache_entries", service="predict", cache=cache) >= 1, cache


def test_search_reports_its_caches(search: TestClient) -> None:
    search.post("/search", json={"tenant": "shop", "query": "product"})
    samples = scrape(search)
    caches = {dict(labels)["cache"] for name, labels in samples if name == "aisle_cache_entries"}
    assert {"tenant_configs", "indexes", "rule_books", "vector_tables", "suggesters", "filter_rows"} <= caches
    assert value(samples, "aisle_cache_entries", service="search", cache="indexes") == 1


def test_a_component_adds_a_scrape_time_gauge(search: TestClient) -> None:
    states = {"shop": "open", "other": "closed"}
    metrics = search.app.state.metrics  # type: ignore[attr-defined]
    metrics.add_gauge(
        "aisle_test_breaker_open",
        "1 while the tenant's breaker is open.",
        lambda: {(t,): float(s == "open") for t, s in states.items()},
        labels=("tenant",),
    )
    metrics.add_gauge("aisle_test_broken", "A reader that fails.", lambda: 1 / 0)
    samples = scrape(search)
    assert value(samples, "aisle_test_breaker_open", service="search", tenant="shop") == 1
    assert value(samples, "aisle_test_breaker_open", service="search", tenant="other") == 0
    states["shop"] = "closed"  # read again at the next scrape, not when set
    assert value(scrape(search), "aisle_test_breaker_open", service="search", tenant="shop") == 0
    assert not any(name.startswith("aisle_test_broken") for name, _ in samples)


def test_metrics_is_left_out_of_the_openapi_document(search: TestClient) -> None:
    assert "/metrics" not in search.get("/openapi.json").json()["paths"]
