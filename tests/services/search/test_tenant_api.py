"""``PUT /tenants/{tenant}`` on the search service: a catalog file no demo uses becomes a tenant that
searches at once; bad files, existing tenants and foreign tokens are refused and write nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from tests.support.auth import AuthKit
from tests.support.catalog_files import books_parquet, wine_csv, wine_ndjson

from aisle.core.auth.scopes import ADMIN, SCOPES
from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.services.search.app import create_app

CSV = {"Content-Type": "text/csv"}
LIMIT = 64 * 1024


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(
        storage_url=f"file://{tmp_path / 'bucket'}",
        data_dir=tmp_path / "data",
        auth="off",
        predict_url="http://127.0.0.1:9",
        redis_url=None,
        max_bulk_bytes=LIMIT,
    )
    with TestClient(create_app(settings, preload=False)) as c:
        yield c


def test_a_wine_csv_becomes_a_tenant_that_searches_and_facets(client: TestClient) -> None:
    answer = client.put("/tenants/wines", content=wine_csv(), headers=CSV)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["tenant"], body["imported"], body["badRowCount"], body["dryRun"]) == ("wines", 30, 0, False)
    assert body["idColumn"] == "sku" and body["version"]
    attrs = {a["column"]: a for a in body["attributes"]}
    assert attrs["sku"]["name"] is None and "id" in attrs["sku"]["why"]
    assert (attrs["winery"]["name"], attrs["winery"]["role"], attrs["winery"]["facetable"]) == (
        "brand",
        "brand",
        True,
    )
    assert (attrs["price"]["type"], attrs["price"]["sortable"]) == ("number", True)
    assert attrs["organic"]["type"] == "boolean" and attrs["category"]["type"] == "category_path"

    search = {"tenant": "wines", "facets": ["brand", "organic", "price"]}
    found = client.post("/search", json={**search, "query": "riesling spatlese"})
    assert found.status_code == 200, found.text
    assert found.json()["products"][0]["id"] == "W-1007"
    assert found.json()["products"][0]["brand"] == "Chateau Lune"
    everything = client.post("/search", json={**search, "query": "", "size": 5}).json()
    assert everything["total"] == 30
    assert {f["value"] for f in everything["facets"]["organic"]} == {"true", "false"}
    assert sum(f["count"] for f in everything["facets"]["brand"]) == 30 and everything["facets"]["price"]
    organic = client.post(
        "/search", json={**search, "query": "", "filters": [{"field": "organic", "value": True}]}
    )
    assert organic.json()["total"] == 10
    cheap = client.get(
        "/search", params={"q": "red", "tenant": "wines", "sort": "price_asc", "size": 3}
    ).json()
    prices = [p["price"] for p in cheap["products"]]
    assert prices and prices == sorted(prices)
    assert "wines" in client.get("/tenants").json()["tenants"]


def test_a_parquet_bookshop_and_an_ndjson_dry_run(client: TestClient, tmp_path: Path) -> None:
    books = client.put(
        "/tenants/books", content=books_parquet(), headers={"Content-Type": "application/vnd.apache.parquet"}
    )
    assert books.status_code == 200, books.text
    assert books.json()["idColumn"] == "isbn" and books.json()["imported"] == 24
    genres = client.post(
        "/search", json={"tenant": "books", "query": "", "facets": ["category", "in_stock"]}
    ).json()
    assert {f["value"] for f in genres["facets"]["category"]} == {
        "Mystery",
        "Science Fiction",
        "History",
        "Cookery",
    }

    before = files_under(tmp_path / "bucket")
    dry = client.put(
        "/tenants/wines?dryRun=true", content=wine_ndjson(), headers={"Content-Type": "application/x-ndjson"}
    )
    assert dry.status_code == 200 and dry.json()["dryRun"] and dry.json()["version"] is None
    assert dry.json()["imported"] == 30
    assert files_under(tmp_path / "bucket") == before


def test_an_existing_tenant_is_refused_unless_replaced(client: TestClient) -> None:
    assert client.put("/tenants/wines", content=wine_csv(), headers=CSV).status_code == 200
    again = client.put("/tenants/wines", content=wine_csv(), headers=CSV)
    assert again.status_code == 409 and again.json()["error"]["code"] == "tenant_exists"
    replaced = client.put(
        "/tenants/wines?replace=true",
        content=books_parquet(),
        headers={"Content-Type": "application/x-parquet"},
    )
    assert replaced.status_code == 200 and replaced.json()["replaced"]
    found = client.post("/search", json={"tenant": "wines", "query": "kitchen"}).json()
    assert found["total"] > 0 and found["products"][0]["id"].startswith("978")


@pytest.mark.parametrize(
    ("path", "body", "content_type", "status", "code"),
    [
        ("/tenants/notes", b"note,mood\nhi,happy\nbye,sad\n", "text/csv", 400, "catalog_id_missing"),
        ("/tenants/notes", b"sku,price\nA,1\nB,2\n", "text/csv", 400, "catalog_title_missing"),
        (
            "/tenants/notes",
            b"sku,name\nA,Red\n",
            "application/vnd.apache.parquet",
            400,
            "catalog_file_invalid",
        ),
        ("/tenants/notes", b"", "text/csv", 400, "catalog_empty"),
        ("/tenants/notes?idColumn=code", b"sku,name\nA,Red\n", "text/csv", 400, "catalog_id_missing"),
        ("/tenants/notes", b'{"sku": "A", "name": "Red"}', "application/json", 415, "unsupported_media_type"),
        ("/tenants/Not%20A%20Name", b"sku,name\nA,Red\n", "text/csv", 422, "validation_error"),
        ("/tenants/notes", b"x" * (LIMIT + 1), "text/csv", 413, "payload_too_large"),
        ("/tenants/notes?dry_run=true", b"sku,name\nA,Red\n", "text/csv", 400, "unknown_parameter"),
    ],
)
def test_a_bad_request_names_its_problem_and_writes_nothing(
    client: TestClient, tmp_path: Path, path: str, body: bytes, content_type: str, status: int, code: str
) -> None:
    before = files_under(tmp_path / "bucket")
    answer = client.put(path, content=body, headers={"Content-Type": content_type})
    assert (answer.status_code, answer.json()["error"]["code"]) == (status, code), answer.text
    assert files_under(tmp_path / "bucket") == before


def test_the_openapi_documents_the_body_and_its_limit(client: TestClient) -> None:
    operation = client.get("/openapi.json").json()["paths"]["/tenants/{tenant}"]["put"]
    assert set(operation["requestBody"]["content"]) >= {
        "text/csv",
        "application/x-ndjson",
        "application/vnd.apache.parquet",
    }
    assert {"dryRun", "replace", "idColumn", "titleColumn"} <= {p["name"] for p in operation["parameters"]}
    assert str(LIMIT) in operation["responses"]["413"]["description"]
    assert {"200", "400", "403", "409", "415", "422"} <= set(operation["responses"])


def test_only_an_admin_token_naming_the_tenant_may_create_it(tmp_path: Path) -> None:
    store = open_blob_store(f"file://{tmp_path / 'bucket'}")
    kit = AuthKit(store)
    settings = kit.settings(
        storage_url=f"file://{tmp_path / 'bucket'}", data_dir=tmp_path / "data", redis_url=None
    )
    with TestClient(create_app(settings, preload=False)) as client:

        def put(token: str | None) -> tuple[int, str | None]:
            headers = {**CSV, **({"Authorization": f"Bearer {token}"} if token else {})}
            answer = client.put("/tenants/wines", content=wine_csv(), headers=headers)
            return answer.status_code, (answer.json().get("error") or {}).get("code")

        assert put(None) == (401, "unauthorized")
        no_admin = kit.token(["wines"], scopes=[s for s in SCOPES if s != ADMIN])
        assert put(no_admin) == (403, "insufficient_scope")
        assert put(kit.token(["fashion"], scopes=[ADMIN])) == (403, "tenant_forbidden")
        assert files_under(tmp_path / "bucket" / "wines") == []
        assert put(kit.token(["wines"], scopes=[ADMIN])) == (200, None)
