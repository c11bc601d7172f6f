"""The search service over HTTP (ASGI): spec shapes, errors in one envelope, browsing endpoints."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from aisle.core.config import Settings
from aisle.services.search.app import create_app


@pytest.fixture(scope="module")
def client(demo_env) -> Iterator[TestClient]:  # type: ignore[no-untyped-def]
    settings = Settings(
        storage_url=demo_env.storage_url,
        data_dir=demo_env.data_dir,
        auth="off",
        predict_url="http://127.0.0.1:9",
    )
    with TestClient(create_app(settings)) as c:
        yield c


def test_post_search_returns_the_spec_shape(client: TestClient) -> None:
    resp = client.post(
        "/search",
        json={
            "query": "red nike running shoes",
            "tenant": "fashion",
            "size": 5,
            "facets": ["brand", "color"],
        },
    )
    assert resp.status_code == 200
    body = resp.json()
    assert set(body) == {"products", "total", "facets", "queryGraph", "redirect"}
    assert body["redirect"] is None
    product = body["products"][0]
    assert {"id", "title", "price", "brand", "color", "score"} <= set(product)
    assert product["brand"] == "Nike" and product["color"] == "Red"
    assert body["facets"]["brand"][0] == {"value": "Nike", "count": body["facets"]["brand"][0]["count"]}
    graph = body["queryGraph"]
    assert graph["normalized"] == "red nike running shoes"
    assert graph["terms"] == ["red", "nike", "run", "shoe"]
    assert graph["stage"] in {"strict", "relaxed", "typo"}


def test_get_search_is_hidden_from_the_docs(client: TestClient) -> None:
    resp = client.get(
        "/search",
        params={"q": "watch", "tenant": "fashion", "size": 2, "facets": "gender", "filter": ["gender:Women"]},
    )
    assert resp.status_code == 200
    assert len(resp.json()["products"]) == 2
    assert all(v["value"] == "Women" for v in resp.json()["facets"]["gender"])
    paths = client.get("/openapi.json").json()["paths"]
    assert "get" not in paths["/search"] and "post" in paths["/search"]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"query": "x", "tenant": "nope"}, 404, "tenant_not_found"),
        ({"query": "x", "tenant": "fashion", "size": 101}, 422, "validation_error"),
        ({"query": "x", "tenant": "Bad Name!"}, 422, "validation_error"),
        ({"query": "x"}, 422, "validation_error"),
        ({"query": "x", "tenant": "fashion", "facets": ["nope"]}, 400, "facet_unknown"),
        (
            {"query": "x", "tenant": "fashion", "filters": [{"field": "nope", "value": 1}]},
            400,
            "filter_unknown",
        ),
        ({"query": "x", "tenant": "homedepot", "sort": "price_asc"}, 400, "sort_unavailable"),
        ({"query": "x", "tenant": "fashion", "sort": "cheapest"}, 422, "validation_error"),
    ],
)
def test_errors_use_one_envelope(client: TestClient, body: dict, status: int, code: str) -> None:
    resp = client.post("/search", json=body)
    assert resp.status_code == status
    assert resp.json()["error"]["code"] == code
    assert resp.json()["error"]["message"]


def test_validation_error_names_the_field(client: TestClient) -> None:
    resp = client.post("/search", json={"query": "x", "tenant": "fashion", "size": 101})
    assert "size" in resp.json()["error"]["message"]


def test_malformed_json_is_422_not_500(client: TestClient) -> None:
    resp = client.post("/search", content=b"{nope", headers={"content-type": "application/json"})
    assert resp.status_code == 422


def test_items_page_and_item(client: TestClient) -> None:
    page = client.get("/items", params={"tenant": "fashion", "size": 3, "from": 2}).json()
    assert page["total"] == 44441 and len(page["items"]) == 3 and page["from"] == 2
    first = page["items"][0]
    assert client.get(f"/item/{first['id']}", params={"tenant": "fashion"}).json()["title"] == first["title"]
    missing = client.get("/item/does-not-exist", params={"tenant": "fashion"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "product_not_found"
    filtered = client.get(
        "/items", params={"tenant": "fashion", "filter": ["price:..500", "gender:Men"]}
    ).json()
    assert all(p["price"] <= 500 and p["gender"] == "Men" for p in filtered["items"])
    bad = client.get("/items", params={"tenant": "fashion", "filter": ["nocolon"]})
    assert bad.status_code == 400


def test_categories_and_levels(client: TestClient) -> None:
    top = client.post("/categories", json={"tenant": "fashion"}).json()
    names = [c["name"] for c in top["categories"]]
    assert "Apparel" in names and "Footwear" in names
    shoes = client.post("/categories", json={"tenant": "fashion", "parent": "Footwear"}).json()
    assert all(c["path"].startswith("Footwear > ") for c in shoes["categories"])
    within = client.post("/categories", json={"tenant": "fashion", "query": "nike"}).json()
    assert sum(c["count"] for c in within["categories"]) < sum(c["count"] for c in top["categories"])
    levels = client.post("/categories/levels", json={"tenant": "fashion", "depth": 2}).json()
    assert [lvl["level"] for lvl in levels["levels"]] == [0, 1]
    footwear = next(n for n in levels["tree"] if n["name"] == "Footwear")
    assert sum(c["count"] for c in footwear["children"]) == footwear["count"]
    unknown = client.post("/categories", json={"tenant": "fashion", "parent": "Spaceships"})
    assert unknown.status_code == 404
    none = client.post("/categories", json={"tenant": "homedepot"})
    assert none.status_code == 400 and none.json()["error"]["code"] == "categories_unavailable"


def test_tenants_health_and_docs(client: TestClient) -> None:
    assert set(client.get("/tenants").json()["tenants"]) >= {"fashion", "homedepot"}
    assert client.get("/health").json()["status"] == "ok"
    assert client.get("/docs").status_code == 200


def test_recommendations_proxy_reports_an_unreachable_predict_service(client: TestClient) -> None:
    resp = client.post(
        "/recommendations", params={"tenant": "fashion"}, json={"containerId": "x", "productIds": ["1"]}
    )
    assert resp.status_code == 503
    assert resp.json()["error"]["code"] == "recommendations_unavailable"
