"""The search service's fast lane: a plain ``GET /search`` answered without FastAPI's per-request work.

Issue 18's profile of the search service under 32 clients put FastAPI's per-request machinery (routing,
solving the route's dependencies, validating its nine query parameters one by one) at about a fifth of
a search's CPU; a handler calling the engine straight from the service's middlewares used 20-25% less
CPU per request than the FastAPI route. The fast lane is that handler, kept honest:

- It sits inside the service's own middlewares (request id, metrics, ``Server-Timing``, body limit:
  unchanged) and in front of FastAPI's router.
- It answers only a request that is plain: ``GET /search`` without a body, every query parameter one
  the route declares (the set comes from the FastAPI route itself), each given once and non-empty,
  parsed by the route's own parser into the same :class:`SearchRequest`, authorized by the
  same :class:`Authorizer` for the same scope (before anything is read from storage), for a tenant
  whose search has nothing to wait for (:meth:`SearchEngine.readiness`: it runs on the
  event loop).
- Anything else goes to the FastAPI route, which answers it: an invalid or unknown parameter, a refused
  token, a tenant on a remote store, an engine error. A request the lane parsed is handed over with
  its :class:`SearchRequest` in the ASGI scope, so the route does not parse it again. Errors have one
  renderer; a request handed over after an engine error is searched twice, which has no side effect.

``AISLE_SEARCH_FAST_LANE=false`` turns it off (every request through the route);
``tests/services/search/test_fast_lane.py`` checks that both give the same answers.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import ValidationError
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response

from aisle.core.auth.dependencies import Authorizer
from aisle.core.auth.scopes import SEARCH_READ
from aisle.core.errors import AisleError
from aisle.core.timing import add_timing
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


class SearchFastLane:
    """ASGI middleware answering plain ``GET /search`` requests itself (see the module docstring).

    Args:
        app: the inner ASGI app (FastAPI's exception middleware and router).
        state: the search service's resources (the engine).
        authorizer: the service's token check.
        route: the ``GET /search`` route: its declared query parameters, its name in the metrics.
        parse: the route's parser of the query parameters into a :class:`SearchRequest`
            (:func:`~aisle.services.search.routes.search_request_of`; raises on a bad one).
        parsed_key: the scope key under which a request handed to the route carries its parsed body.
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
        parsed_key: str,
        enabled: bool = True,
    ) -> None:
        self.app = app
        self.state = state
        self.authorizer = authorizer
        self.route = route
        self.parse = parse
        self.parsed_key = parsed_key
        self.enabled = enabled
        self.declared = declared_query_params(route)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if (
            self.enabled
            and scope["type"] == "http"
            and scope["method"] == "GET"
            and scope["path"] == "/search"
            and await self._answer(scope, send)
        ):
            return
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
        )
        return parsed

    async def _answer(self, scope: Scope, send: Any) -> bool:
        """Answer the request and return True, or return False having sent nothing."""
        engine = self.state.engine
        try:
            body = self._request(scope)
            if body is None:
                return False
            scope[self.parsed_key] = body  # the route, if it answers, takes this instead of parsing again
            # the token first: a refused request must not touch storage (tests/services/auth/test_isolation)
            await self.authorizer.authorize(Request(scope, _no_body), SEARCH_READ)
            ready = engine.readiness(body.tenant)
            if ready.waits:
                return False
            result = self.state.search(body.tenant, body.search_query(), config=ready.config)
        except (AisleError, ValidationError, RequestValidationError):
            return False  # the route answers it, with its status and error code
        except Exception:  # whatever the route makes of it (its 500 envelope)
            return False
        scope["route"] = self.route
        scope[TENANT_KEY] = ("search", body.tenant)
        start = time.perf_counter()
        response = Response(result.json_bytes(), media_type="application/json")
        add_timing("serialize", time.perf_counter() - start)
        await response(scope, _no_body, send)
        return True
