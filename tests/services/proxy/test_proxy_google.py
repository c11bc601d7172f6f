"""The catalog-search proxy service answering from a google_retail backend: google-cloud-retail and
-vision over HTTP to Google's stand-in, whose catalog is the tenant's own (Google returns ids, Aisle
shows its products)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.conftest import require
from tests.search.external.conftest import HAS_GOOGLE, png
from tests.search.external.contract import CATALOG, RUNNING
from tests.support.auth import AuthKit
from tests.support.external_google import write_google_tenant
from tests.support.sockets import free_port

from aisle.core.auth.scopes import SEARCH_READ
from aisle.core.storage import open_blob_store

COLOURS = {"Blue": (30, 60, 200), "Black": (10, 10, 10), "White": (245, 245, 245)}


# No cache and a patient breaker: each test's call reaches the stand-in.
FALLBACK = {"timeout_ms": 500, "cache_ttl_s": 0, "breaker": {"fail_max": 1000}}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, AuthKit, TestClient]]:
    require(HAS_GOOGLE, "google-cloud-retail is not installed (pip install '.[google]')")
    from tests.support.google_retail_search import retail_product
    from tests.support.google_retail_standin import GoogleStandin, backend_config

    from aisle.services.proxy.app import create_app

    tmp = tmp_path_factory.mktemp("proxy-google")
    store = open_blob_store(f"file://{tmp / 'bucket'}")
    standin = GoogleStandin(
        [retail_product(p) for p in CATALOG],
        images={p["id"]: png(COLOURS.get(p["color"], (200, 40, 40))) for p in CATALOG},
        corrections={"runing": "running"},
        redirects={"gift cards": "/gift-cards"},
    )
    with standin:
        write_google_tenant(store, "shop", backend_config(standin), **FALLBACK)
        down = {**backend_config(standin), "endpoint": f"127.0.0.1:{free_port()}"}
        write_google_tenant(store, "shop-down", down, **FALLBACK)
        kit = AuthKit(store)
        settings = kit.settings(storage_url=f"file://{tmp / 'bucket'}", data_dir=Path(tmp / "data"))
        with TestClient(create_app(settings)) as client:
            yield standin, kit, client


@pytest.fixture
def auth(service: tuple[Any, AuthKit, TestClient]) -> dict[str, str]:
    return {"Authorization": f"Bearer {service[1].token(['shop', 'shop-down'], [SEARCH_READ])}"}


@pytest.fixture
def client(service: tuple[Any, AuthKit, TestClient]) -> TestClient:
    return service[2]


def test_search_shows_the_tenants_products_for_googles_ids(client: TestClient, auth: dict[str, str]) -> None:
    body = {"query": "running", "tenant": "shop", "size": 10, "facets": ["brand"], "sort": "price_asc"}
    resp = client.post("/search", json=body, headers=auth)
    assert resp.status_code == 200, resp.text
    data = resp.json()
    assert {p["id"] for p in data["products"]} == RUNNING and data["total"] == len(RUNNING)
    prices = [p["price"] for p in data["products"]]
    assert prices == sorted(prices) and all(p["title"] for p in data["products"])  # hydrated
    assert {f["value"]: f["count"] for f in data["facets"]["brand"]} == {"Asics": 2, "Nike": 2, "Salomon": 1}
    assert data["queryGraph"]["external"]["backend"] == "google_retail"
    google, own = data["queryGraph"]["external"]["attribution_token"], data["attributionToken"]
    assert google and own and google != own  # Google's for Google, Aisle's for Aisle's analytics


def test_corrected_query_and_redirect(client: TestClient, auth: dict[str, str]) -> None:
    data = client.post("/search", json={"query": "runing socks", "tenant": "shop"}, headers=auth).json()
    assert data["correctedQuery"] == "running socks" and [p["id"] for p in data["products"]] == ["ext-3"]
    data = client.post("/search", json={"query": "gift cards", "tenant": "shop"}, headers=auth).json()
    assert data["redirect"] == "/gift-cards" and data["products"] == []


def test_suggestions_from_complete_query(client: TestClient, auth: dict[str, str]) -> None:
    resp = client.get("/suggestions", params={"qStr": "runn", "tenant": "shop", "limit": 3}, headers=auth)
    assert resp.status_code == 200, resp.text
    assert 1 <= len(resp.json()) <= 3 and all(i["suggestion"].startswith("runn") for i in resp.json())


def test_image_search_through_vision(client: TestClient, auth: dict[str, str]) -> None:
    files = {"file": ("blue.png", png(COLOURS["Blue"]), "image/png")}
    resp = client.post("/images/search", params={"tenant": "shop", "size": 2}, files=files, headers=auth)
    assert resp.status_code == 200, resp.text
    products = resp.json()["products"]
    assert {p["id"] for p in products} == {"ext-1", "ext-5"}  # the blue ones
    assert all(p["title"] and p["score"] is not None for p in products)


@pytest.mark.parametrize(
    ("fault", "status", "code"),
    [
        (401, 502, "external_search_auth_failed"),
        (429, 503, "external_search_rate_limited"),
        (503, 502, "external_search_unavailable"),
        ("slow", 504, "external_search_timeout"),
    ],
)
def test_google_failures_become_the_proxys_errors(
    service: tuple[Any, AuthKit, TestClient], auth: dict[str, str], fault: Any, status: int, code: str
) -> None:
    standin, _, client = service
    standin.slow(2.0) if fault == "slow" else standin.fail(fault)
    resp = client.post("/search", json={"query": f"jacket {fault}", "tenant": "shop"}, headers=auth)
    assert resp.status_code == status and resp.json()["error"]["code"] == code
    assert client.post("/search", json={"query": "jacket", "tenant": "shop"}, headers=auth).status_code == 200


def test_google_unreachable_is_502(client: TestClient, auth: dict[str, str]) -> None:
    resp = client.post("/search", json={"query": "jacket", "tenant": "shop-down"}, headers=auth)
    assert resp.status_code == 502 and resp.json()["error"]["code"] == "external_search_unavailable"
