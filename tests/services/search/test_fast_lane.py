"""The search service's fast lane (issue 18): it answers plain GET and POST /search requests itself (a
request it parsed is authorised and answered there, once), hands every other request to the FastAPI
route, and the service answers the same with the lane on or off."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.auth import AuthKit

from aisle.core.auth.scopes import SEARCH_READ
from aisle.core.readiness import Readiness
from aisle.core.storage import open_blob_store
from aisle.services.search import routes
from aisle.services.search.app import create_app
from aisle.services.search.fast_lane import SearchFastLane


@pytest.fixture(scope="module")
def kit(demo_env) -> AuthKit:  # type: ignore[no-untyped-def]
    return AuthKit(open_blob_store(demo_env.storage_url))


@pytest.fixture(scope="module")
def clients(demo_env, kit: AuthKit) -> Iterator[tuple[TestClient, TestClient]]:  # type: ignore[no-untyped-def]
    """The search service with auth on, with the fast lane and without it."""
    apps = [
        create_app(
            kit.settings(storage_url=demo_env.storage_url, data_dir=demo_env.data_dir, search_fast_lane=on)
        )
        for on in (True, False)
    ]
    with TestClient(apps[0]) as lane, TestClient(apps[1]) as route:
        yield lane, route


def _comparable(resp: Any) -> tuple[int, Any]:
    body = resp.json()
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body["error"].pop("requestId", None)  # a new id per request
    if isinstance(body, dict) and isinstance(body.get("queryGraph"), dict):
        body["queryGraph"].pop("took_ms", None)  # the one figure two runs of a search differ in
        token = body.pop("attributionToken", None)  # and its token: each answer has its own
        assert isinstance(token, str) and token, "every search answer carries an attribution token"
    return resp.status_code, body


def _differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two JSON values differ (paths), for a readable failure."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in _differences(a.get(k), b.get(k), f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        pairs = enumerate(zip(a, b, strict=True))
        return [d for i, (x, y) in pairs for d in _differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r:.80} != {b!r:.80}"]


def _assert_same(clients: tuple[TestClient, TestClient], query: str, headers: dict[str, str]) -> None:
    lane, route = (list(_comparable(c.get(f"/search?{query}", headers=headers))) for c in clients)
    assert lane == route, (query, _differences(lane, route)[:5])


VALUES = {
    "tenant": st.sampled_from(["fashion", "homedepot", "nobody", "Fashion", "", "a" * 70]),
    "q": st.one_of(st.sampled_from(["shirt", "red nike shoes", "", "x" * 513]), st.text(max_size=20)),
    "query": st.sampled_from(["shirt", "watch", ""]),
    "size": st.sampled_from(["0", "5", "20", "100", "101", "-1", "abc", "2.0", " 3", ""]),
    "from": st.sampled_from(["0", "10", "10000", "10001", "x"]),
    "sort": st.sampled_from(["relevance", "price_asc", "price_desc", "cheap"]),
    "facets": st.sampled_from(["brand", "brand,color", "nope", "", ",", "brand," * 20, "b" * 1030]),
    "filter": st.sampled_from(["brand:Nike", "gender:Women", "price:10..50", "price:a..b", "nocolon", "x:y"]),
    "tennant": st.just("fashion"),
}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.sampled_from(sorted(VALUES)), min_size=0, max_size=6).flatmap(
        lambda names: st.tuples(*(st.tuples(st.just(n), VALUES[n]) for n in names))
    ),
    st.sampled_from(["fashion", "both", "none", "bad"]),
)
def test_lane_and_route_give_the_same_answer(
    clients: tuple[TestClient, TestClient], kit: AuthKit, params: tuple[tuple[str, str], ...], token: str
) -> None:
    headers = {
        "fashion": {"Authorization": f"Bearer {kit.token(['fashion'])}"},
        "both": {"Authorization": f"Bearer {kit.token(['fashion', 'homedepot'])}"},
        "none": {},
        "bad": {"Authorization": "Bearer nonsense"},
    }[token]
    _assert_same(clients, urlencode(list(params)), headers)


def test_common_requests_are_answered_the_same(clients: tuple[TestClient, TestClient], kit: AuthKit) -> None:
    headers = {"Authorization": f"Bearer {kit.token(['fashion', 'homedepot'])}"}
    for query in (
        "tenant=fashion&q=red+nike+running+shoes&size=20&facets=brand,color,article_type",
        "tenant=homedepot&q=angle+bracket&size=10",
        "tenant=fashion&query=watch&size=2&facets=gender&filter=gender:Women",
        "tenant=fashion&q=shirt&filter=brand:Nike&filter=brand:Puma&sort=price_asc&from=5",
        "tenant=fashion&q=shirt&q=shoe",  # a parameter given twice: the route decides
        "tenant=fashion&q=shirt&query=shirt",
    ):
        _assert_same(clients, query, headers)


class _Router:
    """Stands in for FastAPI's router behind the lane: records what reaches it. ``service``: the app
    whose error handler renders what the lane refuses (``scope["app"]``, as Starlette sets it)."""

    def __init__(self, service: Any) -> None:
        self.service = service
        self.reached: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.reached.append(scope["query_string"].decode())
        await send({"type": "http.response.start", "status": 299, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def _call(lane: SearchFastLane, query: str, headers: dict[str, str], method: str = "GET") -> int:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": method,
        "path": "/search",
        "query_string": query.encode(),
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "app": lane.app.service,
    }
    asyncio.run(lane(scope, receive, send))
    return int(sent[0]["status"])


def test_the_lane_answers_plain_requests_and_hands_over_the_rest(
    clients: tuple[TestClient, TestClient], kit: AuthKit, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = clients[0].app
    router = _Router(app)
    authorizer = _CountingAuthorizer(app.state.authorizer)  # type: ignore[attr-defined]
    lane = SearchFastLane(
        router,
        state=app.state.search,  # type: ignore[attr-defined]
        authorizer=authorizer,  # type: ignore[arg-type]
        route=routes.search_get_route(),
        parse=routes.search_request_of,
    )
    token = {"Authorization": f"Bearer {kit.token(['fashion'], scopes=[SEARCH_READ])}"}
    plain = "tenant=fashion&q=shirt&size=5&facets=brand&filter=gender:Men&filter=gender:Women"
    assert _call(lane, plain, token) == 200 and router.reached == []
    # parsed, so authorised and answered by the lane, refused or not: never parsed or authorised again
    answered = {
        "tenant=homedepot&q=shirt": 403,  # the token does not cover the tenant
        "tenant=fashion&q=shirt&facets=nope": 400,  # the engine refuses the facet
        "tenant=nobody&q=shirt": 403,
    }
    for query, status in answered.items():
        assert _call(lane, query, token) == status, query
    nobody = {"Authorization": f"Bearer {kit.token(['nobody'], scopes=[SEARCH_READ])}"}
    assert _call(lane, "tenant=nobody&q=shirt", nobody) == 404  # looked up on the thread pool: not found
    assert _call(lane, plain, {}) == 401  # no token
    engine = app.state.search.engine  # type: ignore[attr-defined]
    monkeypatch.setattr(engine, "readiness", lambda tenant: Readiness(waits=True))
    assert _call(lane, plain, token) == 200  # a search that may wait: the thread pool, still the lane's
    assert router.reached == []
    assert authorizer.calls == 7  # each request the lane answered, authorised once
    handed = [
        "tenant=fashion&q=shirt&size=500",  # invalid
        "tenant=fashion&q=shirt&tennant=x",  # unknown parameter
        "tenant=fashion&q=",  # an empty value
    ]
    for query in handed:
        assert _call(lane, query, token) == 299
    assert _call(lane, plain, {**token, "Content-Length": "3"}) == 299  # a body
    assert router.reached == [*handed, plain]
    assert authorizer.calls == 7  # one it hands over is not authorised by the lane: only by the route
    lane.enabled = False
    assert _call(lane, plain, token) == 299


class _CountingAuthorizer:
    """The service's token check, counting the requests it authorises."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls = 0

    async def authorize(self, request: Any, scope: str) -> Any:
        self.calls += 1
        return await self.inner.authorize(request, scope)


# -- POST /search (issue 32): the spec's entry point takes the lane too ----------------------------

BODY_VALUES = {
    "tenant": st.sampled_from(["fashion", "homedepot", "nobody", "Fashion", "", 3, None]),
    "query": st.one_of(st.sampled_from(["shirt", "red nike shoes", "", "x" * 513, 7]), st.text(max_size=20)),
    "size": st.sampled_from([0, 5, 20, 100, 101, -1, "5", 2.0, 2.5, True, None]),
    "from": st.sampled_from([0, 10, 10_000, 10_001, "x"]),
    "sort": st.sampled_from(["relevance", "price_asc", "price_desc", "cheap"]),
    "facets": st.sampled_from([["brand"], ["brand", "color"], ["nope"], [], "brand", ["b"] * 17]),
    "filters": st.sampled_from(
        [
            [{"field": "brand", "value": "Nike"}],
            [{"field": "gender", "value": ["Women", "Men"]}],
            [{"field": "price", "value": {"gte": 10, "lte": 50}}],
            [{"field": "price", "value": {"gte": "a"}}],
            [{"field": "brand"}],
            "brand:Nike",
        ]
    ),
    "userGroup": st.sampled_from(["vip", None, "x" * 65]),
    "visitorId": st.sampled_from(["v-1", None]),
    "tennant": st.just("fashion"),
}

CONTENT_TYPES = st.sampled_from(
    [
        "application/json",
        "application/json; charset=utf-8",
        "",
        "text/plain",
        "application/x-www-form-urlencoded",
    ]
)


def _post_same(
    clients: tuple[TestClient, TestClient], body: bytes, headers: dict[str, str], query: str = ""
) -> None:
    url = f"/search?{query}" if query else "/search"
    lane, route = (list(_comparable(c.post(url, content=body, headers=headers))) for c in clients)
    assert lane == route, (body[:200], _differences(lane, route)[:5])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.one_of(
        st.dictionaries(st.sampled_from(sorted(BODY_VALUES)), st.nothing(), max_size=0).flatmap(
            lambda _: st.fixed_dictionaries({}, optional=BODY_VALUES)
        ),
        st.sampled_from([b"", b"{", b"[]", b"null", b'{"tenant": "fashion", "query": NaN}']),
    ),
    CONTENT_TYPES,
    st.sampled_from(["fashion", "both", "none", "bad"]),
    st.sampled_from(["", "tenant=fashion", "q=x"]),
)
def test_post_lane_and_route_give_the_same_answer(
    clients: tuple[TestClient, TestClient],
    kit: AuthKit,
    body: dict[str, Any] | bytes,
    content_type: str,
    token: str,
    query: str,
) -> None:
    import orjson

    headers = {
        "fashion": {"Authorization": f"Bearer {kit.token(['fashion'])}"},
        "both": {"Authorization": f"Bearer {kit.token(['fashion', 'homedepot'])}"},
        "none": {},
        "bad": {"Authorization": "Bearer nonsense"},
    }[token]
    if content_type:
        headers = {**headers, "Content-Type": content_type}
    raw = body if isinstance(body, bytes) else orjson.dumps(body)
    _post_same(clients, raw, headers, query)


def test_common_posts_are_answered_the_same(clients: tuple[TestClient, TestClient], kit: AuthKit) -> None:
    import orjson

    headers = {
        "Authorization": f"Bearer {kit.token(['fashion', 'homedepot'])}",
        "Content-Type": "application/json",
    }
    for body in (
        {"tenant": "fashion", "query": "red nike running shoes", "size": 20, "facets": ["brand", "color"]},
        {"tenant": "homedepot", "query": "angle bracket", "size": 10},
        {"tenant": "fashion", "query": "watch", "filters": [{"field": "gender", "value": "Women"}]},
        {"tenant": "fashion", "query": "shirt", "sort": "price_asc", "from": 5, "userGroup": "vip"},
    ):
        _post_same(clients, orjson.dumps(body), headers)


class _BodyRouter(_Router):
    """A :class:`_Router` that also reads the body each request reaches it with."""

    def __init__(self, service: Any) -> None:
        super().__init__(service)
        self.bodies: list[bytes] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body, more = b"", True
        while more:
            message = await receive()
            body, more = body + message.get("body", b""), message.get("more_body", False)
        self.bodies.append(body)
        await super().__call__(scope, receive, send)


def _post(lane: SearchFastLane, body: bytes, headers: dict[str, str], query: str = "") -> int:
    sent: list[dict[str, Any]] = []
    chunks = [body[: len(body) // 2], body[len(body) // 2 :]]  # the body in two messages

    async def receive() -> dict[str, Any]:
        if chunks:
            chunk = chunks.pop(0)
            return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/search",
        "query_string": query.encode(),
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "app": lane.app.service,
    }
    asyncio.run(lane(scope, receive, send))
    return int(sent[0]["status"])


def test_the_lane_answers_plain_posts_and_hands_over_the_rest_with_their_body(
    clients: tuple[TestClient, TestClient], kit: AuthKit
) -> None:
    app = clients[0].app
    router = _BodyRouter(app)
    lane = SearchFastLane(
        router,
        state=app.state.search,  # type: ignore[attr-defined]
        authorizer=app.state.authorizer,  # type: ignore[attr-defined]
        route=routes.search_get_route(),
        post_route=routes.search_post_route(),
        parse=routes.search_request_of,
    )
    token = {"Authorization": f"Bearer {kit.token(['fashion'], scopes=[SEARCH_READ])}"}
    plain = b'{"tenant": "fashion", "query": "shirt", "size": 5, "facets": ["brand"]}'
    assert _post(lane, plain, token) == 200 and router.reached == []
    assert _post(lane, plain, {**token, "Content-Type": "application/json"}) == 200
    answered = {  # parsed: authorised and answered once, by the lane
        b'{"tenant": "homedepot", "query": "shirt"}': 403,  # the token does not cover the tenant
        b'{"tenant": "fashion", "query": "shirt", "facets": ["nope"]}': 400,  # the engine refuses the facet
        b'{"tenant": "nobody", "query": "shirt"}': 403,
    }
    for body, status in answered.items():
        assert _post(lane, body, token) == status, body
    nobody = {"Authorization": f"Bearer {kit.token(['nobody'], scopes=[SEARCH_READ])}"}
    assert _post(lane, b'{"tenant": "nobody", "query": "shirt"}', nobody) == 404
    assert _post(lane, plain, {}) == 401  # no token
    assert router.reached == []
    handed = [
        b'{"tenant": "fashion", "query": "shirt", "size": 500}',  # invalid
        b'{"tenant": "fashion", "query": "shirt", "tennant": "x"}',  # unknown field
        b'{"tenant": "fashion", "query": "shi',  # not JSON
    ]
    for body in handed:
        assert _post(lane, body, token) == 299
    assert _post(lane, plain, {**token, "Content-Type": "text/plain"}) == 299  # not JSON by its type
    assert _post(lane, plain, token, query="tenant=fashion") == 299  # a query string: the route refuses it
    assert router.bodies == [*handed, plain, plain]  # each handed over with its body as it came
    lane.post_route = None
    assert _post(lane, plain, token) == 299
