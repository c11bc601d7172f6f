"""The search service's fast lane: a plain ``GET`` or ``POST /search`` answered without FastAPI's
per-request work.

Issue 18's profile of the search service under 32 clients put FastAPI's per-request machinery (routing,
solving the route's dependencies, validating its nine query parameters one by one) at about a fifth of
a search's CPU; a handler calling the engine straight from the service's middlewares used 20-25% less
CPU per request than the FastAPI route. The fast lane is that handler, kept honest:

- It sits inside the service's own middlewares (request id, metrics, ``Server-Timing``, body limit:
  unchanged) and in front of FastAPI's router.
- It answers only a request that is plain. ``GET /search`` without a body, every query parameter one
  the route declares (the set comes from the FastAPI route itself), each given once and non-empty,
  parsed by the route's own parser into the same :class:`SearchRequest`. ``POST /search`` (the spec's
  entry point, issue 32) without query parameters, with a JSON body (no content type, or
  ``application/json``) that :class:`SearchRequest` accepts, as FastAPI would validate it. Either is
  authorized by the same :class:`Authorizer` for the same scope (before anything is read from storage).
- A request the lane parsed is authorised by it and answered by it, whatever comes next: the search
  itself (:meth:`SearchState.respond`, the route's own: on the event loop for a tenant whose search has
  nothing to wait for, :meth:`SearchEngine.readiness`, else the thread pool), or the error of a refused
  token or of the engine, rendered by the app's own handler of :class:`AisleError`. So a request is
  parsed and authorised once.
- Anything the lane cannot parse goes to the FastAPI route, which answers it: an invalid or unknown
  parameter or body (its 422 names the field as FastAPI does), a request with a body or a query string
  it does not take. A ``POST`` the lane read is handed over with its body replayed.

``AISLE_SEARCH_FAST_LANE=false`` turns it off (every request through the route);
``tests/services/search/test_fast_lane.py`` checks that both give the same answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from fastapi.routing import APIRoute
from starlette.datastructures import QueryParams
from starlette.requests import Request

from aisle.core.auth.dependencies import Authorizer
from aisle.core.auth.errors import TenantForbidden
from aisle.core.auth.scopes import SEARCH_READ
from aisle.core.errors import AisleError
from aisle.services.common.metrics import TENANT_KEY
from aisle.services.common.params import declared_query_params
from aisle.services.common.search_schemas import SearchRequest
from aisle.services.search.state import SearchState

Scope = dict[str, Any]


async def _no_body() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


def _has_body(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"transfer-encoding" or (name == b"content-length" and value.strip() != b"0"):
            return True
    return False


def _json_without_query(scope: Scope) -> bool:
    """A ``POST`` the lane may read: no query string, and a JSON body by its content type (none, or
    ``application/json`` with parameters at most; FastAPI parses both as JSON)."""
    if scope["query_string"]:
        return False
    for name, value in scope["headers"]:
        if name == b"content-type":
            return value.split(b";", 1)[0].strip().lower() == b"application/json"
    return True


async def _read_body(receive: Any) -> bytes | None:
    """The whole request body, or None when the client went away first."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Any) -> Any:
    """A ``receive`` giving ``body`` once more, then what the client sends next (a disconnect)."""
    given = False

    async def replay() -> dict[str, Any]:
        nonlocal given
        if given:
            result: dict[str, Any] = await receive()
            return result
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


def _from_body(body: bytes) -> SearchRequest:
    """``POST /search``'s body as the route validates it (raises when it would refuse it)."""
    return SearchRequest.model_validate(orjson.loads(body))


class SearchFastLane:
    """ASGI middleware answering plain ``GET`` and ``POST /search`` requests itself (see the module).

    Args:
        app: the inner ASGI app (FastAPI's exception middleware and router).
        state: the search service's resources (the engine).
        authorizer: the service's token check.
        route: the ``GET /search`` route: its declared query parameters, its name in the metrics.
        post_route: the ``POST /search`` route (its name in the metrics); None hands every ``POST`` to
            the router.
        parse: the route's parser of the query parameters into a :class:`SearchRequest`
            (:func:`~aisle.services.search.routes.search_request_of`; raises on a bad one).
        enabled: False hands every request to the route.
    """

    def __init__(
        self,
        app: Any,
        *,
        state: SearchState,
        authorizer: Authorizer,
        route: APIRoute,
        parse: Any,
        enabled: bool = True,
        post_route: APIRoute | None = None,
    ) -> None:
        self.app = app
        self.state = state
        self.authorizer = authorizer
        self.route = route
        self.parse = parse
        self.enabled = enabled
        self.post_route = post_route
        self.declared = declared_query_params(route)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if self.enabled and scope["type"] == "http" and scope["path"] == "/search":
            method = scope["method"]
            if method == "GET" and await self._answer(scope, send, _no_body, self.route, self._request):
                return
            if method == "POST" and self.post_route is not None and _json_without_query(scope):
                body = await _read_body(receive)
                if body is None:
                    return  # the client went away: nothing to answer
                read = _replay(body, receive)
                if await self._answer(scope, send, read, self.post_route, lambda _: _from_body(body)):
                    return
                receive = _replay(body, receive)  # the route reads the body as it came
        await self.app(scope, receive, send)

    def _request(self, scope: Scope) -> SearchRequest | None:
        """The search the query string asks for, or None when the route should look at it."""
        if _has_body(scope):
            return None
        params = QueryParams(scope["query_string"])
        items = params.multi_items()
        names = [k for k, _ in items]
        if any(not v for _, v in items) or not set(names) <= self.declared:
            return None
        if len(names) != len(set(names)) and any(names.count(n) > 1 for n in names if n != "filter"):
            return None
        q, query, facets = params.get("q"), params.get("query"), params.get("facets", "")
        if (q is not None and query is not None) or len(facets) > 1024:
            return None
        parsed: SearchRequest = self.parse(
            tenant=params.get("tenant"),
            q=q,
            query=query,
            size=params.get("size", 20),
            from_=params.get("from", 0),
            sort=params.get("sort", "relevance"),
            facets=facets,
            filter=params.getlist("filter"),
            visitor_id=params.get("visitorId"),
            store_id=params.get("storeId"),
            prefix=params.get("prefix", False),
            ignore_understood=params.get("ignoreUnderstood", ""),
            follow_up=params.get("followUp", True),
        )
        return parsed

    async def _answer(
        self,
        scope: Scope,
        send: Any,
        receive: Any,
        route: APIRoute,
        parse: Callable[[Scope], SearchRequest | None],
    ) -> bool:
        """Answer the request and return True, or return False having sent nothing (it could not be
        parsed: the route parses it and says why). ``receive``: the request's body (the token check may
        read its tenant); ``parse`` makes the search of it (None or an exception: the route's to answer)."""
        try:
            body = parse(scope)
        except Exception:  # ValidationError, RequestValidationError, BadRequest, JSONDecodeError, ...
            return False  # the route answers it, with its status and error code
        if body is None:
            return False
        scope["route"] = route  # as the router would: the metrics name it, refused or answered
        request = Request(scope, receive)
        try:
            # the token first: a refused request must not touch storage (tests/services/auth/test_isolation)
            principal = await self.authorizer.authorize(request, SEARCH_READ)
            if principal is not None and body.tenant not in principal.tenants:
                raise TenantForbidden(body.tenant)  # the tenant searched, checked as parsed
            scope[TENANT_KEY] = ("search", body.tenant)
            response = await self.state.respond(body)
        except AisleError as exc:  # rendered as the route's would be: by the app's one handler
            response = await scope["app"].exception_handlers[AisleError](request, exc)
        await response(scope, _no_body, send)
        return True
