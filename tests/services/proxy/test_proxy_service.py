"""The catalog-search proxy service over HTTP, answering from a real Typesense server."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from PIL import Image
from tests.search.external.contract import RUNNING
from tests.support.auth import AuthKit
from tests.support.external import KEY_ENV, crs_config, load_external, write_outdoor_tenant
from tests.support.sockets import free_port, silent_server

from aisle.core.auth.scopes import SEARCH_READ
from aisle.core.storage import open_blob_store
from aisle.demo.typesense_server import TypesenseServer
from aisle.services.proxy.app import create_app


@pytest.fixture(scope="module")
def kit_and_client(
    typesense: TypesenseServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[AuthKit, TestClient]]:
    load_external(typesense.url, typesense.api_key)
    tmp = tmp_path_factory.mktemp("proxy")
    store = open_blob_store(f"file://{tmp / 'bucket'}")
    with pytest.MonkeyPatch.context() as mp, silent_server() as silent_port:
        mp.setenv(KEY_ENV, typesense.api_key)
        mp.setenv("AISLE_TEST_WRONG_KEY", "not-the-key")
        _tenants(store, typesense.url, silent_port)
        kit = AuthKit(store)
        settings = kit.settings(storage_url=f"file://{tmp / 'bucket'}", data_dir=Path(tmp / "data"))
        with TestClient(create_app(settings)) as client:
            yield kit, client


def _tenants(store, url: str, silent_port: int) -> None:  # type: ignore[no-untyped-def]
    from aisle.core.tenancy import Tenants

    write_outdoor_tenant(store, "outdoor", crs_config(url))
    write_outdoor_tenant(store, "other", crs_config(url))
    write_outdoor_tenant(store, "plain")
    write_outdoor_tenant(store, "down", crs_config(f"http://127.0.0.1:{free_port()}"))
    write_outdoor_tenant(store, "silent", crs_config(f"http://127.0.0.1:{silent_port}", timeout_ms=200))
    write_outdoor_tenant(store, "badkey", crs_config(url, key_env="AISLE_TEST_WRONG_KEY"))
    write_outdoor_tenant(store, "unset", crs_config(url, key_env="AISLE_TEST_UNSET_KEY"))
    assert len(Tenants(store).names()) == 7


@pytest.fixture
def client(kit_and_client: tuple[AuthKit, TestClient]) -> TestClient:
    return kit_and_client[1]


def headers(kit_and_client: tuple[AuthKit, TestClient], tenants: list[str], scopes=(SEARCH_READ,)):  # type: ignore[no-untyped-def]
    return {"Authorization": f"Bearer {kit_and_client[0].token(tenants, list(scopes))}"}


ALL = ["outdoor", "other", "plain", "down", "silent", "badkey", "unset"]


@pytest.fixture
def auth(kit_and_client: tuple[AuthKit, TestClient]) -> dict[str, str]:
    return headers(kit_and_client, ALL)


def test_search_answers_from_the_external_service(client: TestClient, auth: dict[str, str]) -> None:
    body = {"query": "running", "tenant": "outdoor", "size": 10, "facets": ["brand"], "visitorId": "v-1"}
    resp = client.post("/search", json=body, headers=auth)
    assert resp.status_code == 200, resp.text
    data = resp.json()
    assert {p["id"] for p in data["products"]} == RUNNING  # Aisle's own "Running belt" is not among them
    assert data["total"] == len(RUNNING)
    assert {f["value"]: f["count"] for f in data["facets"]["brand"]} == {"Asics": 2, "Nike": 2, "Salomon": 1}
    external = data["queryGraph"]["external"]
    assert (external["status"], external["reason"], external["backend"]) == ("answered", "proxy", "typesense")


def test_search_passes_filters_sort_and_paging(client: TestClient, auth: dict[str, str]) -> None:
    body = {
        "query": "running",
        "tenant": "outdoor",
        "size": 2,
        "from": 1,
        "sort": "price_asc",
        "filters": [{"field": "price", "value": {"lt": 100}}],
    }
    data = client.post("/search", json=body, headers=auth).json()
    assert [p["price"] for p in data["products"]] == [22.0, 35.0]  # 12, [22, 35], 95
    assert data["total"] == 4


def test_suggestions(client: TestClient, auth: dict[str, str]) -> None:
    resp = client.get("/suggestions", params={"qStr": "runn", "tenant": "outdoor", "limit": 3}, headers=auth)
    assert resp.status_code == 200
    items = resp.json()
    assert 1 <= len(items) <= 3
    assert all(i["type"] == "product" and "runn" in i["suggestion"].lower() for i in items)


def test_image_search_on_a_backend_without_it_is_409(client: TestClient, auth: dict[str, str]) -> None:
    buf = io.BytesIO()
    Image.new("RGB", (32, 32), "red").save(buf, format="PNG")
    files = {"file": ("red.png", buf.getvalue(), "image/png")}
    resp = client.post("/images/search", params={"tenant": "outdoor"}, files=files, headers=auth)
    assert resp.status_code == 409 and resp.json()["error"]["code"] == "external_search_unsupported"
    bad = {"file": ("x.png", b"not an image", "image/png")}
    resp = client.post("/images/search", params={"tenant": "outdoor"}, files=bad, headers=auth)
    assert resp.status_code == 400 and resp.json()["error"]["code"] == "image_invalid"


@pytest.mark.parametrize(
    ("tenant", "status", "code"),
    [
        ("plain", 409, "external_search_not_configured"),
        ("down", 502, "external_search_unavailable"),
        ("silent", 504, "external_search_timeout"),
        ("badkey", 502, "external_search_auth_failed"),
        ("unset", 502, "external_search_auth_failed"),
    ],
)
def test_external_errors(
    client: TestClient, auth: dict[str, str], tenant: str, status: int, code: str
) -> None:
    resp = client.post("/search", json={"query": "running", "tenant": tenant}, headers=auth)
    assert resp.status_code == status and resp.json()["error"]["code"] == code
    resp = client.get("/suggestions", params={"qStr": "run", "tenant": tenant}, headers=auth)
    assert resp.status_code == status and resp.json()["error"]["code"] == code


def test_unknown_tenant_and_unknown_field(client: TestClient, kit_and_client) -> None:  # type: ignore[no-untyped-def]
    auth = headers(kit_and_client, ["nobody", "outdoor"])
    resp = client.post("/search", json={"query": "x", "tenant": "nobody"}, headers=auth)
    assert resp.status_code == 404 and resp.json()["error"]["code"] == "tenant_not_found"
    body = {"query": "x", "tenant": "outdoor", "filters": [{"field": "colour", "value": "Blue"}]}
    resp = client.post("/search", json=body, headers=auth)
    assert resp.status_code == 400 and resp.json()["error"]["code"] == "external_search_rejected"


def test_token_and_tenant_isolation(client: TestClient, kit_and_client) -> None:  # type: ignore[no-untyped-def]
    body = {"query": "running", "tenant": "outdoor"}
    assert client.post("/search", json=body).status_code == 401
    other = headers(kit_and_client, ["other"])
    resp = client.post("/search", json=body, headers=other)
    assert resp.status_code == 403 and resp.json()["error"]["code"] == "tenant_forbidden"
    no_scope = headers(kit_and_client, ["outdoor"], scopes=("catalog:write",))
    resp = client.post("/search", json=body, headers=no_scope)
    assert resp.status_code == 403 and resp.json()["error"]["code"] == "insufficient_scope"
    resp = client.get("/suggestions", params={"qStr": "run", "tenant": "outdoor"}, headers=other)
    assert resp.status_code == 403


def test_health_and_openapi_document_every_status(client: TestClient) -> None:
    assert client.get("/health").json()["service"] == "proxy"
    spec = client.get("/openapi.json").json()
    for path, method in (("/search", "post"), ("/suggestions", "get"), ("/images/search", "post")):
        documented = set(spec["paths"][path][method]["responses"])
        assert {"200", "401", "403", "404", "409", "502", "503", "504"} <= documented, (path, documented)


def test_metrics_show_the_breaker_open_while_the_external_service_is_down(
    client: TestClient, auth: dict[str, str]
) -> None:
    client.post("/search", json={"query": "tent", "tenant": "outdoor"}, headers=auth)
    for _ in range(6):  # the breaker opens after 5 consecutive failures (crs_config default)
        client.post("/search", json={"query": "tent", "tenant": "down"}, headers=auth)
    text = client.get("/metrics").text
    assert 'aisle_external_search_breaker_open{service="proxy",tenant="down"} 1.0' in text
    assert 'aisle_external_search_breaker_open{service="proxy",tenant="outdoor"} 0.0' in text
