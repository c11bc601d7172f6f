"""What the search service's routes reach through dependencies: the engine and the predict client.

The dependencies are ``async`` on purpose: they only read ``request.app.state``, and an async dependency
runs inline where a plain ``def`` one is handed to the thread pool (one more hop per request).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Annotated

import httpx
from fastapi import Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from aisle.core.config import Settings
from aisle.core.tenancy import TenantConfig
from aisle.core.timing import add_timing
from aisle.search.engine import SearchEngine
from aisle.search.model import SearchResult
from aisle.search.query import SearchQuery
from aisle.services.common.outcomes import Outcomes
from aisle.services.common.search_schemas import SearchRequest


@dataclass
class SearchState:
    """Resources of one search-service process (``request.app.state.search``): the engine, the predict
    client of ``POST /recommendations``, and the analytics recording of its answers (``outcomes``)."""

    settings: Settings
    engine: SearchEngine
    predict_client: httpx.AsyncClient
    outcomes: Outcomes | None = None

    async def respond(self, body: SearchRequest) -> Response:
        """The JSON answer to one parsed and authorised ``/search`` (the fast lane's or the route's): on
        the event loop when the tenant's search has nothing to wait for (:meth:`SearchEngine.readiness`;
        an external fallback's call is awaited), else on the thread pool; the tenant's configuration, once
        looked up, goes along. The answer is recorded for analytics unless ``body.analytics`` is false.

        Raises: what :meth:`SearchEngine.search` raises (TenantNotFound, BadRequest, ...).
        """
        query = body.search_query()
        ready = self.engine.readiness(body.tenant)
        if ready.waits or ready.found is None:
            return await run_in_threadpool(self._blocking, body.tenant, query, ready.found, body.analytics)
        result = await self.engine.search_async(body.tenant, query, config=ready.found)
        return _json(self._recorded(body.tenant, query, result, body.analytics))

    def _blocking(
        self, tenant: str, query: SearchQuery, config: TenantConfig | None, record: bool
    ) -> Response:
        return _json(self._recorded(tenant, query, self.engine.search(tenant, query, config=config), record))

    def _recorded(self, tenant: str, query: SearchQuery, result: SearchResult, record: bool) -> SearchResult:
        """The answer, given its attribution token and recorded (neither when ``record`` is false: a
        page's helper query, not a shopper's search)."""
        if self.outcomes is not None and record:
            self.outcomes.search_answer(tenant, "search", query, result)
        return result


def _json(result: SearchResult) -> Response:
    start = time.perf_counter()
    response = Response(result.json_bytes(), media_type="application/json")
    add_timing("serialize", time.perf_counter() - start)
    return response


async def _state(request: Request) -> SearchState:
    return request.app.state.search


async def _engine(request: Request) -> SearchEngine:
    return request.app.state.search.engine


State = Annotated[SearchState, Depends(_state)]
Engine = Annotated[SearchEngine, Depends(_engine)]
