"""GET /suggestions over HTTP (ASGI): the spec's shape, blank qStr, default tenant, ranking, no
duplicates, per-type limits, query-log suggestions, and every suggestion returning search results.

The default tenant: the demo bucket has none, so a request without ``tenant`` is a 404
``tenant_not_found`` there; a second app over a bucket with a tiny ``default`` tenant shows the
parameter defaulting to it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from tests.support.waiting import wait_until

from aisle.catalog.datasets.common import tenant_files
from aisle.catalog.importer import import_catalog
from aisle.core.config import Settings
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import (
    Attribute,
    AttributeConfiguration,
    AutocompleteConfiguration,
    GlobalConfiguration,
)
from aisle.search.normalize import normalize
from aisle.search.querylog import import_query_log
from aisle.services.search.app import create_app

PREFIXES = {
    "fashion": ["n", "nik", "nkie", "adi", "tsh", "wat", "run sho", "red t", "levis je", "kurt", "sunglas"],
    "homedepot": ["d", "dri", "toil", "gas mow", '1/2" pv', "samsng", "lawn sp", "cordless dril"],
}


def _settings(storage_url: str, data_dir: Path) -> Settings:
    return Settings(storage_url=storage_url, data_dir=data_dir, auth="off", predict_url="http://127.0.0.1:9")


@pytest.fixture(scope="module")
def client(demo_env, shared_data: Path) -> Iterator[TestClient]:  # type: ignore[no-untyped-def]
    tenants = Tenants(demo_env.store, ttl=0)
    import_query_log(tenants, "homedepot", shared_data / "homedepot" / "queries_dev.txt")
    with TestClient(create_app(_settings(demo_env.storage_url, demo_env.data_dir), preload=False)) as c:
        yield c


def _suggest(client: TestClient, q: str, tenant: str) -> list[dict[str, str]]:
    resp = client.get("/suggestions", params={"qStr": q, "tenant": tenant})
    assert resp.status_code == 200, resp.text
    return resp.json()


def test_nik_and_nkie_suggest_the_brand_nike_first(client: TestClient) -> None:
    for q in ("nik", "nkie", "NIK"):
        body = _suggest(client, q, "fashion")
        assert set(body[0]) == {"suggestion", "type"}
        assert {"suggestion": "Nike", "type": "brand"} in body[:2], (q, body)


def test_category_and_product_suggestions(client: TestClient) -> None:
    assert {"suggestion": "Tshirts", "type": "category"} in _suggest(client, "tsh", "fashion")
    assert {"suggestion": "Watches", "type": "category"} in _suggest(client, "wat", "fashion")
    body = _suggest(client, "run sho", "fashion")
    assert body and all(s["type"] == "product" for s in body)
    for s in body:
        words = normalize(s["suggestion"]).split()
        assert any(w.startswith("run") for w in words) and any(w.startswith("sho") for w in words)


def test_query_log_suggestions_after_import(client: TestClient, shared_data: Path) -> None:
    logged = {normalize(q) for q in (shared_data / "homedepot" / "queries_dev.txt").read_text().splitlines()}
    body = _suggest(client, "toil", "homedepot")
    queries = [s["suggestion"] for s in body if s["type"] == "query"]
    assert len(queries) >= 3
    assert all(normalize(q) in logged and normalize(q).startswith("toil") for q in queries)
    assert body[0]["type"] == "query"  # boost 1.0 and a log-scaled popularity: the log comes first


def test_no_duplicates_and_type_limits(client: TestClient) -> None:
    limits = AutocompleteConfiguration()
    for tenant, prefixes in PREFIXES.items():
        for q in prefixes:
            body = _suggest(client, q, tenant)
            assert body, (tenant, q)  # limits hold on a real list, not on an empty one
            keys = [normalize(s["suggestion"]) for s in body]
            assert len(keys) == len(set(keys)), (q, body)
            assert len(body) <= limits.max_suggestions
            for kind, cfg in limits.types.items():
                assert sum(s["type"] == kind for s in body) <= cfg.limit, (q, kind, body)
    assert len(client.get("/suggestions", params={"qStr": "n", "tenant": "fashion", "limit": 2}).json()) == 2


def test_every_suggestion_returns_search_results(client: TestClient) -> None:
    for tenant, prefixes in PREFIXES.items():
        for q in prefixes[::2]:
            suggestions = _suggest(client, q, tenant)
            assert suggestions, (tenant, q)
            for s in suggestions:
                resp = client.post("/search", json={"query": s["suggestion"], "tenant": tenant, "size": 1})
                assert resp.status_code == 200
                assert resp.json()["total"] > 0, (tenant, q, s)


def test_blank_or_missing_qstr_is_a_422_that_says_so(client: TestClient) -> None:
    for params in ({"qStr": "", "tenant": "fashion"}, {"qStr": "   ", "tenant": "fashion"}):
        resp = client.get("/suggestions", params=params)
        assert resp.status_code == 422
        error = resp.json()["error"]
        assert error["code"] == "validation_error"
        assert error["message"].startswith("query.qStr: String should match pattern")
    resp = client.get("/suggestions", params={"tenant": "fashion"})
    assert resp.status_code == 422 and "qStr" in resp.json()["error"]["message"]
    resp = client.get("/suggestions", params={"qStr": "x" * 129, "tenant": "fashion"})
    assert resp.status_code == 422
    resp = client.get("/suggestions", params={"qStr": "nik", "tenant": "fashion", "limit": 51})
    assert resp.status_code == 422


def test_tenant_defaults_to_default_which_the_demo_bucket_lacks(client: TestClient) -> None:
    resp = client.get("/suggestions", params={"qStr": "nik"})
    assert resp.status_code == 404
    assert resp.json()["error"]["code"] == "tenant_not_found"
    assert "'default'" in resp.json()["error"]["message"]
    assert client.get("/suggestions", params={"qStr": "nik", "tenant": "nobody"}).status_code == 404


def test_tenant_defaults_to_default_and_a_new_log_is_served(blob_store: BlobStore, tmp_path: Path) -> None:
    tenants = Tenants(blob_store, ttl=0)
    attrs = AttributeConfiguration(
        attributes=[
            Attribute(name="title", type="text", role="title", searchable=True),
            Attribute(name="brand", role="brand", searchable=True, filterable=True),
        ]
    )
    tenants.write_config("default", tenant_files(attrs, GlobalConfiguration()))
    source = tmp_path / "grocery.csv"
    source.write_text(
        "id,title,brand\n1,Honey Nut Cheerios,General Mills\n2,Cheddar Cheese Block,Tillamook\n"
    )
    import_catalog(tenants, "default", source)
    url = blob_store.local_path("")
    assert url is not None
    with TestClient(create_app(_settings(f"file://{url}", tmp_path / "data"), preload=False)) as c:
        resp = c.get("/suggestions", params={"qStr": "che"})
        assert resp.status_code == 200
        assert resp.json() == [
            {"suggestion": "Cheddar Cheese Block", "type": "product"},  # "che" starts its first word
            {"suggestion": "Honey Nut Cheerios", "type": "product"},
        ]
        # A new query log is picked up while the service runs (checked in the background every second).
        log = tmp_path / "log.txt"
        log.write_text("cheese block\ncheese block\n")
        import_query_log(tenants, "default", log)
        newest = {"suggestion": "cheese block", "type": "query"}
        wait_until(
            lambda: c.get("/suggestions", params={"qStr": "che"}).json()[0] == newest,
            "the new query log's 'cheese block' is suggested first",
            every=0.2,
        )


def test_openapi_documents_the_response(client: TestClient) -> None:
    op = client.get("/openapi.json").json()["paths"]["/suggestions"]["get"]
    params = {p["name"]: p for p in op["parameters"]}
    assert params["qStr"]["required"] is True and params["tenant"]["schema"]["default"] == "default"
    schema = op["responses"]["200"]["content"]["application/json"]["schema"]
    assert schema["type"] == "array" and "SuggestionItem" in schema["items"]["$ref"]
