"""Request ids (services/common/request_id.py): echoed in X-Request-Id, in error envelopes and log lines."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator

import pytest
from fastapi import APIRouter
from fastapi.testclient import TestClient
from tests.services.common.conftest import predict_app, search_app

from aisle.core.config import Settings
from aisle.services.common.app import service_app
from aisle.services.common.request_id import RequestIdFilter, current_request_id

NEW_ID = re.compile(r"[0-9a-f]{32}")
log = logging.getLogger("aisle.test.request_id")


@pytest.fixture
def search(settings: Settings) -> Iterator[TestClient]:
    with TestClient(search_app(settings)) as client:
        yield client


def test_a_valid_incoming_id_is_kept(search: TestClient) -> None:
    resp = search.get("/health", headers={"X-Request-Id": "lb-7f3a:42.x_y"})
    assert resp.headers["x-request-id"] == "lb-7f3a:42.x_y"


@pytest.mark.parametrize("incoming", ["", "a" * 129, "has space", "semi;colon", "naïve", "a\tb"])
def test_an_unsafe_or_overlong_id_is_replaced(search: TestClient, incoming: str) -> None:
    resp = search.get("/health", headers={"X-Request-Id": incoming.encode("utf-8")})
    assert NEW_ID.fullmatch(resp.headers["x-request-id"])


def test_each_request_without_an_id_gets_a_new_one(search: TestClient) -> None:
    ids = {search.get("/health").headers["x-request-id"] for _ in range(5)}
    assert len(ids) == 5 and all(NEW_ID.fullmatch(i) for i in ids)


def test_error_envelopes_carry_the_id(search: TestClient, settings: Settings) -> None:
    resp = search.get("/search", params={"tenant": "nosuch", "q": "x"}, headers={"X-Request-Id": "r-404"})
    assert resp.status_code == 404
    assert resp.headers["x-request-id"] == "r-404"
    assert resp.json()["error"]["requestId"] == "r-404"
    unknown = search.get(
        "/search", params={"tenant": "shop", "bogus": "1"}, headers={"X-Request-Id": "r-400"}
    )
    assert unknown.status_code == 400 and unknown.json()["error"]["requestId"] == "r-400"
    with TestClient(predict_app(settings)) as predict:
        resp = predict.post("/predict", params={"tenant": "shop"}, json={}, headers={"X-Request-Id": "r-422"})
    assert resp.status_code == 422
    assert resp.json()["success"] is False
    assert resp.json()["error"]["requestId"] == resp.headers["x-request-id"] == "r-422"


def _app_that_logs(settings: Settings) -> TestClient:
    router = APIRouter()

    @router.get("/sync")
    def in_a_thread() -> dict[str, str | None]:  # a plain def route runs in the thread pool
        log.warning("from a worker thread")
        return {"seen": current_request_id()}

    @router.get("/boom")
    async def boom() -> None:
        raise RuntimeError("unexpected")

    app = service_app("test", title="t", description="d", routers=[router], settings=settings)
    return TestClient(app, raise_server_exceptions=False)


def test_log_lines_of_a_request_carry_its_id(settings: Settings) -> None:
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with _app_that_logs(settings) as client:
            resp = client.get("/sync", headers={"X-Request-Id": "trace-1"})
            failed = client.get("/boom", headers={"X-Request-Id": "trace-2"})
        log.warning("outside any request")
    finally:
        root.removeHandler(handler)
    assert resp.json() == {"seen": "trace-1"}
    by_message = {r.getMessage(): r for r in records}
    assert by_message["from a worker thread"].request_id == "trace-1"  # type: ignore[attr-defined]
    assert by_message["unhandled error"].request_id == "trace-2"  # type: ignore[attr-defined]
    assert by_message["outside any request"].request_id == "-"  # type: ignore[attr-defined]
    # an unexpected error: 500 in the envelope, the id in the header and the body all the same
    assert failed.status_code == 500
    assert failed.headers["x-request-id"] == "trace-2"
    assert failed.json()["error"] == {
        "code": "internal_error",
        "message": "internal error; see the service log",
        "requestId": "trace-2",
    }


def test_the_envelope_schema_documents_the_id(search: TestClient) -> None:
    schemas = search.get("/openapi.json").json()["components"]["schemas"]
    assert "requestId" in schemas["ErrorObject"]["properties"]


def test_search_passes_the_id_on_to_predict(settings: Settings) -> None:
    from tests.support.auth import serve

    from aisle.services.search.app import create_app

    with serve(predict_app(settings)) as predict_url:
        app = create_app(settings.model_copy(update={"predict_url": predict_url}), preload=False)
        with TestClient(app) as search:
            resp = search.post(
                "/recommendations",
                params={"tenant": "shop"},
                json={"containerId": "nosuch", "productIds": ["p0"]},
                headers={"X-Request-Id": "shopper-42"},
            )
    assert resp.status_code == 404
    assert resp.json()["error"]["code"] == "container_not_found"
    assert resp.json()["error"]["requestId"] == "shopper-42"  # written by predict: the id went along
