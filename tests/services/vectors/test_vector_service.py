"""The vector search service over HTTP: search by text or vector with filters, index, delete, auth."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from fastapi.testclient import TestClient
from tests.support.auth import AuthKit
from tests.support.vectors import MiniTenant

from aisle.catalog.datasets import fashion
from aisle.core.auth.scopes import CATALOG_WRITE, SEARCH_READ
from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.services.vectors.app import create_app


@pytest.fixture(scope="module")
def client(mini: MiniTenant) -> Iterator[TestClient]:
    tenants = Tenants(open_blob_store(mini.storage_url), ttl=0)
    if not tenants.exists("bare"):  # a tenant with configuration but no vectors
        tenants.write_config("bare", fashion.configs())
    settings = Settings(storage_url=mini.storage_url, data_dir=mini.data_dir, auth="off")
    with TestClient(create_app(settings)) as c:
        yield c


def test_search_by_text_returns_nearest_first(client: TestClient) -> None:
    resp = client.post("/vectors/search", params={"tenant": "fashion"}, json={"text": "wrist watch", "k": 5})
    assert resp.status_code == 200
    body = resp.json()
    assert body["tenant"] == "fashion" and body["kind"] == "text"
    scores = [n["score"] for n in body["neighbours"]]
    assert len(scores) == 5 and scores == sorted(scores, reverse=True)
    assert "server-timing" in resp.headers


def test_search_by_vector_and_filters(client: TestClient) -> None:
    vector = np.random.default_rng(0).standard_normal(384).tolist()
    body = {"vector": vector, "k": 8, "filters": [{"field": "gender", "value": "Women"}]}
    resp = client.post("/vectors/search", params={"tenant": "fashion"}, json=body)
    assert resp.status_code == 200
    ids = [n["id"] for n in resp.json()["neighbours"]]
    assert ids
    women = client.post(
        "/vectors/search",
        params={"tenant": "fashion"},
        json={"text": "clothes", "k": 100, "filters": [{"field": "gender", "value": "Women"}]},
    ).json()["neighbours"]
    men = client.post(
        "/vectors/search",
        params={"tenant": "fashion"},
        json={"text": "clothes", "k": 100, "filters": [{"field": "gender", "value": "Men"}]},
    ).json()["neighbours"]
    assert women and men and not {n["id"] for n in women} & {n["id"] for n in men}


def test_index_and_delete_are_persisted(client: TestClient, mini: MiniTenant) -> None:
    put = client.put(
        "/vectors",
        params={"tenant": "fashion"},
        json={"items": [{"id": "kettle-1", "text": "stainless steel electric kettle 1.7 litre"}]},
    )
    assert put.status_code == 200 and put.json()["count"] == 1
    top = client.post(
        "/vectors/search", params={"tenant": "fashion"}, json={"text": "electric kettle", "k": 1}
    )
    assert top.json()["neighbours"][0]["id"] == "kettle-1"
    fresh = TestClient(create_app(Settings(storage_url=mini.storage_url, data_dir=mini.data_dir, auth="off")))
    again = fresh.post(
        "/vectors/search", params={"tenant": "fashion"}, json={"text": "electric kettle", "k": 1}
    )
    assert again.json()["neighbours"][0]["id"] == "kettle-1"  # another process: from the write log
    gone = client.request(
        "DELETE", "/vectors", params={"tenant": "fashion"}, json={"ids": ["kettle-1", "nope"]}
    )
    assert gone.status_code == 200 and gone.json()["count"] == 1
    after = client.post(
        "/vectors/search", params={"tenant": "fashion"}, json={"text": "electric kettle", "k": 5}
    )
    assert "kettle-1" not in [n["id"] for n in after.json()["neighbours"]]


@pytest.mark.parametrize(
    ("tenant", "body", "status", "code"),
    [
        ("nope", {"text": "x"}, 404, "tenant_not_found"),
        ("bare", {"text": "x"}, 503, "vector_index_missing"),
        ("fashion", {"text": "x", "vector": [1.0]}, 400, "value_invalid"),
        ("fashion", {}, 400, "value_invalid"),
        ("fashion", {"vector": [1.0, 0.0]}, 400, "vector_dimension_mismatch"),
        ("fashion", {"text": "x", "k": 0}, 422, "validation_error"),
        ("fashion", {"text": "x", "filters": [{"field": "nope", "value": 1}]}, 400, "filter_unknown"),
        ("Bad!", {"text": "x"}, 422, "validation_error"),  # the tenant pattern: documented
        ("fashion", {"text": "x", "filters": [{"field": "year", "value": 1e20}]}, 400, "value_invalid"),
        (
            "fashion",
            {"text": "x", "filters": [{"field": "year", "value": 2**63 - 1}]},
            400,
            "value_invalid",
        ),
        ("fashion", {"vector": [1e300] * 384}, 400, "value_invalid"),
    ],
)
def test_errors_use_the_envelope(client: TestClient, tenant: str, body: dict, status: int, code: str) -> None:
    resp = client.post("/vectors/search", params={"tenant": tenant}, json=body)
    assert resp.status_code == status, resp.text
    assert resp.json()["error"]["code"] == code


def test_info_lists_the_tables(client: TestClient) -> None:
    body = client.get("/vectors", params={"tenant": "fashion"}).json()
    kinds = {t["kind"]: t for t in body["tables"]}
    assert kinds["text"]["dimension"] == 384 and kinds["text"]["count"] >= 100


def test_scopes_search_read_and_catalog_write(mini: MiniTenant) -> None:
    kit = AuthKit(open_blob_store(mini.storage_url))
    settings = kit.settings(storage_url=mini.storage_url, data_dir=mini.data_dir)
    c = TestClient(create_app(settings))
    body = {"text": "watch", "k": 2}
    assert c.post("/vectors/search", params={"tenant": "fashion"}, json=body).status_code == 401
    reader = {"Authorization": f"Bearer {kit.token(['fashion'], [SEARCH_READ])}"}
    assert (
        c.post("/vectors/search", params={"tenant": "fashion"}, json=body, headers=reader).status_code == 200
    )
    put = {"items": [{"id": "x-1", "text": "a thing"}]}
    denied = c.put("/vectors", params={"tenant": "fashion"}, json=put, headers=reader)
    assert denied.status_code == 403 and denied.json()["error"]["code"] == "insufficient_scope"
    other = {"Authorization": f"Bearer {kit.token(['homedepot'], [SEARCH_READ])}"}
    assert (
        c.post("/vectors/search", params={"tenant": "fashion"}, json=body, headers=other).status_code == 403
    )
    writer = {"Authorization": f"Bearer {kit.token(['fashion'], [CATALOG_WRITE])}"}
    assert c.put("/vectors", params={"tenant": "fashion"}, json=put, headers=writer).status_code == 200
    removed = c.request(
        "DELETE", "/vectors", params={"tenant": "fashion"}, json={"ids": ["x-1"]}, headers=writer
    )
    assert removed.json()["count"] == 1


def test_start_up_opens_every_table_and_loads_the_text_encoder(
    mini: MiniTenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aisle.vectors.text_encoder import TextEncoder

    loads: list[int] = []
    real = TextEncoder.load.__func__  # type: ignore[attr-defined]

    def counting(cls: type[TextEncoder], *args: object, **kwargs: object) -> TextEncoder:
        loads.append(1)
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(TextEncoder, "load", classmethod(counting))
    app = create_app(Settings(storage_url=mini.storage_url, data_dir=mini.data_dir, auth="off"))
    with TestClient(app) as c:
        opened = app.state.vectors.store.opened()
        assert ("fashion", "text") in opened
        assert (("fashion", "image") in opened) is mini.has_images
        assert loads == [1]  # at start-up, not on the first query
        resp = c.post("/vectors/search", params={"tenant": "fashion"}, json={"text": "wrist watch", "k": 3})
        assert resp.status_code == 200 and len(resp.json()["neighbours"]) == 3
        assert loads == [1]
