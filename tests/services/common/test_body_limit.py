"""The request body limit (services/common/body_limit.py), through uvicorn: 413 before the body is read."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from fastapi.testclient import TestClient
from tests.services.common.conftest import predict_app, search_app
from tests.support.auth import serve

from aisle.core.config import Settings

MB = 1_000_000
LIMIT = 1024 * 1024  # the default AISLE_MAX_BODY_BYTES


class BodyCounter:
    """Wraps an ASGI app; counts the request body bytes the app has pulled through ``receive``."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.pulled = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        async def counting_receive() -> dict[str, Any]:
            message = await receive()
            if message["type"] == "http.request":
                self.pulled += len(message.get("body", b""))
            return message

        await self.app(scope, counting_receive, send)


@pytest.fixture
def search(settings: Settings) -> Iterator[tuple[str, BodyCounter]]:
    counter = BodyCounter(search_app(settings))
    with serve(counter) as url:
        yield url, counter


def assert_payload_too_large(resp: httpx.Response) -> None:
    assert resp.status_code == 413, resp.text
    error = resp.json()["error"]
    assert error["code"] == "payload_too_large"
    assert error["details"] == {"limit": LIMIT}
    assert error["requestId"] == resp.headers["x-request-id"]


def test_a_50_mb_search_body_is_refused_without_being_read(search: tuple[str, BodyCounter]) -> None:
    url, counter = search
    body = b'{"tenant": "shop", "query": "' + b"x" * (50 * MB) + b'"}'
    resp = httpx.post(f"{url}/search", content=body, headers={"content-type": "application/json"}, timeout=60)
    assert_payload_too_large(resp)
    assert counter.pulled == 0  # refused on its Content-Length: not one body byte reached the app


def test_a_chunked_50_mb_body_is_cut_off_at_the_limit(search: tuple[str, BodyCounter]) -> None:
    url, counter = search

    def chunks() -> Iterator[bytes]:  # no Content-Length: httpx sends Transfer-Encoding: chunked
        yield b'{"tenant": "shop", "query": "'
        for _ in range(50):
            yield b"x" * MB
        yield b'"}'

    json_type = {"content-type": "application/json"}
    resp = httpx.post(f"{url}/search", content=chunks(), headers=json_type, timeout=60)
    assert_payload_too_large(resp)
    assert LIMIT < counter.pulled < 2 * LIMIT  # the app stopped reading one chunk past the limit


def test_the_413_comes_before_the_client_sends_the_body(search: tuple[str, BodyCounter]) -> None:
    url, counter = search
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 50000000\r\n\r\n"
        )
        answer = b""  # no body byte is sent: the server answers on the header alone
        while b"}}" not in answer:
            chunk = sock.recv(65536)
            assert chunk, f"connection closed after {answer!r}"
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413"), head
    assert orjson.loads(body)["error"]["code"] == "payload_too_large"
    assert counter.pulled == 0


def test_a_body_within_the_limit_is_served(search: tuple[str, BodyCounter]) -> None:
    url, _ = search
    query = "shoes " + "x" * 500  # within the query's own bound
    resp = httpx.post(f"{url}/search", json={"tenant": "shop", "query": query}, timeout=30)
    assert resp.status_code == 200, resp.text


def test_the_limit_is_a_setting(settings: Settings) -> None:
    app = search_app(settings.model_copy(update={"max_body_bytes": 2048}))
    with TestClient(app) as client:
        resp = client.post("/search", json={"tenant": "shop", "query": "y" * 3000})
    assert resp.status_code == 413
    assert resp.json()["error"]["details"] == {"limit": 2048}


def test_predict_refuses_in_its_own_envelope(settings: Settings) -> None:
    with TestClient(predict_app(settings)) as client:
        resp = client.post(
            "/predict",
            params={"tenant": "shop"},
            content=b'{"containerId": "c1", "productIds": ["' + b"p" * (2 * MB) + b'"]}',
            headers={"content-type": "application/json"},
        )
    assert resp.status_code == 413
    body = resp.json()
    assert body["success"] is False and body["response_data"] == []
    assert body["error"]["code"] == "payload_too_large"


def test_413_is_documented_where_a_body_is_taken(settings: Settings) -> None:
    with TestClient(search_app(settings)) as client:
        paths = client.get("/openapi.json").json()["paths"]
    assert "413" in paths["/search"]["post"]["responses"]
    assert "413" not in paths["/search"]["get"]["responses"]
    upload = paths["/images/search"]["post"]["responses"]["413"]["description"]
    assert upload == f"payload_too_large: the request body is over {9 * LIMIT} bytes"
    with TestClient(predict_app(settings)) as client:
        predict = client.get("/openapi.json").json()["paths"]["/predict"]["post"]["responses"]
    ref = predict["413"]["content"]["application/json"]["schema"]["$ref"]
    assert ref.endswith("/PredictErrorEnvelope")


def test_a_full_event_batch_passes_the_bulk_limit(settings: Settings) -> None:
    """POST /events takes 10,000 events (its documented batch): over 1 MiB, within AISLE_MAX_BULK_BYTES."""
    from aisle.services.edit.app import create_app

    events = [
        {
            "visitorId": f"visitor-{i:06d}",
            "sessionId": f"session-{i:06d}",
            "eventType": "view",
            "productId": f"p{i % 8}",
            "timestamp": "2025-11-25T07:00:00Z",
        }
        for i in range(10_000)
    ]
    body = orjson.dumps({"events": events})
    assert len(body) > LIMIT
    with TestClient(create_app(settings)) as client:
        resp = client.post(
            "/events", params={"tenant": "shop"}, content=body, headers={"content-type": "application/json"}
        )
        assert resp.status_code == 202, resp.text
        assert resp.json() == {"accepted": 10_000}
        described = client.get("/openapi.json").json()["paths"]["/events"]["post"]["responses"]["413"]
    assert str(32 * LIMIT) in described["description"]
