"""The search service over HTTP (ASGI): spec shapes, errors in one envelope, browsing endpoints."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from aisle.core.config import Settings
from aisle.services.common.timing import app_ms
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
    # a broad query (54 products) also carries a follow-up question (guided search, issue 33)
    assert set(body) - {"followUp"} == {
        "products",
        "total",
        "facets",
        "queryGraph",
        "redirect",
        "attributionToken",
        "catalogSequence",
    }
    assert body["redirect"] is None
    product = body["products"][0]
    assert {"id", "title", "price", "brand", "color", "score"} <= set(product)
    assert product["brand"] == "Nike" and product["color"] == "Red"
    assert body["facets"]["brand"][0] == {"value": "Nike", "count": body["facets"]["brand"][0]["count"]}
    graph = body["queryGraph"]
    assert graph["normalized"] == "red nike running shoes"
    assert graph["terms"] == ["red", "nike", "run", "shoe"]
    assert graph["stage"] in {"strict", "relaxed", "typo"}


def test_get_search_takes_q_or_query_and_refuses_unknown_parameters(client: TestClient) -> None:
    params = {"q": "watch", "tenant": "fashion", "size": 2, "facets": "gender", "filter": ["gender:Women"]}
    resp = client.get("/search", params=params)
    assert resp.status_code == 200
    assert len(resp.json()["products"]) == 2
    gender = resp.json()["facets"]["gender"]
    assert gender and all(v["value"] == "Women" for v in gender)
    by_q = [p["id"] for p in resp.json()["products"]]
    aliased = client.get(
        "/search", params={**{k: v for k, v in params.items() if k != "q"}, "query": "watch"}
    )
    assert [p["id"] for p in aliased.json()["products"]] == by_q
    everything = client.get("/items", params={"tenant": "fashion"}).json()["total"]
    assert aliased.json()["total"] == resp.json()["total"] < everything

    typo = client.get("/search", params={"qury": "watch", "tenant": "fashion"})
    assert typo.status_code == 400 and typo.json()["error"]["code"] == "unknown_parameter"
    assert "qury" in typo.json()["error"]["message"]
    both = client.get("/search", params={"q": "watch", "query": "shoes", "tenant": "fashion"})
    assert both.status_code == 400
    paths = client.get("/openapi.json").json()["paths"]
    assert {"get", "post"} <= set(paths["/search"])


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
    assert filtered["items"] and all(p["price"] <= 500 and p["gender"] == "Men" for p in filtered["items"])
    bad = client.get("/items", params={"tenant": "fashion", "filter": ["nocolon"]})
    assert bad.status_code == 400


def test_categories_and_levels(client: TestClient) -> None:
    top = client.post("/categories", json={"tenant": "fashion"}).json()
    names = [c["name"] for c in top["categories"]]
    assert "Apparel" in names and "Footwear" in names
    shoes = client.post("/categories", json={"tenant": "fashion", "parent": "Footwear"}).json()
    assert shoes["categories"] and all(c["path"].startswith("Footwear > ") for c in shoes["categories"])
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


@pytest.mark.parametrize(
    "value",
    [1e20, 9223372036854775807, -(2**63), {"gte": 1e300}, [1, 1e19]],
)
def test_numbers_beyond_2_53_are_a_400_not_a_500(client: TestClient, value: object) -> None:
    body = {"query": "watch", "tenant": "fashion", "filters": [{"field": "year", "value": value}]}
    r = client.post("/search", json=body)
    assert r.status_code == 400 and r.json()["error"]["code"] == "value_invalid", r.text
    assert "between -2^53 and 2^53" in r.json()["error"]["message"]


@pytest.mark.parametrize("raw", ["year:100000000000000000000000000000", "year:1e20..", "price:nan..inf"])
def test_filter_parameters_beyond_range_are_a_400(client: TestClient, raw: str) -> None:
    for path in ("/items", "/search"):
        r = client.get(path, params={"tenant": "fashion", "filter": raw})
        assert r.status_code == 400, (path, r.text)
        assert r.json()["error"]["code"] == "filter_invalid"


def test_nan_in_a_range_filter_is_refused(client: TestClient) -> None:
    raw = b'{"query": "", "tenant": "fashion", "filters": [{"field": "price", "value": {"gte": NaN}}]}'
    r = client.post("/search", content=raw, headers={"content-type": "application/json"})
    assert r.status_code == 400 and "finite" in r.json()["error"]["message"]


def test_server_timing_names_the_search_stages_after_the_app_total(client: TestClient) -> None:
    resp = client.get("/search", params={"q": "blue shirt", "tenant": "fashion", "facets": "brand"})
    assert resp.status_code == 200
    entries = [part.strip().split(";dur=") for part in resp.headers["server-timing"].split(",")]
    names = [name for name, _ in entries]
    durations = {name: float(ms) for name, ms in entries}
    assert names[0] == "app"
    assert {"understand", "retrieve", "facets", "shape", "serialize"} <= set(names)
    assert names.index("understand") < names.index("retrieve") < names.index("facets")
    # "embed" (the query embedding, when the tenant has vectors) is part of "hybrid"
    assert sum(ms for name, ms in durations.items() if name not in ("app", "embed")) <= durations["app"]
    assert app_ms(resp.headers["server-timing"]) == durations["app"]
    # a route that records nothing still answers with the app total alone
    health = client.get("/health")
    assert (
        health.headers["server-timing"].startswith("app;dur=") and "," not in health.headers["server-timing"]
    )
