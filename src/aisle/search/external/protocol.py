"""The backend protocol for an external retail search service (``crs_config.json``).

One :class:`ExternalSearch` per tenant backend (Typesense, Google Cloud Retail), opened by
:func:`aisle.search.external.resolver.open_external_search`. Two callers: the search pipeline's fallback
stage (``aisle.search.stages.fallback``) and the catalog-search proxy service (port 8082).

The protocol is synchronous, on purpose: the search pipeline runs its stages in a worker thread (tantivy
blocks), the proxy service's routes are plain ``def`` routes like the search service's, and the backends'
own clients are blocking (``typesense`` over ``requests``, ``google-cloud-retail``'s REST transport).
A backend may also offer ``async def search_async(request)`` (the Typesense one does, over
``httpx.AsyncClient``): the search service's event-loop path awaits it
(:meth:`~aisle.search.external.guarded.GuardedExternalSearch.search_async`); a backend without it has its
``search`` run in a worker thread there, so only a search that calls the service leaves the loop.
Every call carries ``timeout_s``, the whole budget of that call: a backend returns or raises
:class:`~aisle.search.external.errors.ExternalSearchTimeout` within about that time (its HTTP timeout).

Requests and results carry Aisle's search request and response (spec "Search request"/"Search
response") and what Google's ``SearchRequest``/``SearchResponse`` add: ``visitor_id``, ``corrected_query``,
``redirect_uri``, ``attribution_token``. A backend that returns only product ids leaves
``ExternalProduct.fields`` None; :func:`aisle.search.external.hydrate.hydrate` fills them from the
tenant's catalog.

Errors: every backend raises only the :mod:`aisle.search.external.errors` hierarchy (its transport's
exceptions translated), so callers decide once what is a failure for the circuit breaker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from aisle.search.model import FacetValue, FilterSpec, SortOrder
from aisle.search.query import SearchQuery

DEFAULT_TIMEOUT_S = 0.8


@dataclass(frozen=True)
class ExternalSearchRequest:
    """A text search. ``filters`` are Aisle's (field, value | [values] (OR) | {gt,gte,lt,lte} range) on the
    tenant's attribute names; ``facets`` attribute names to count; ``size`` 0..100 products from
    ``offset``; ``visitor_id`` the shopper (Google's ``visitorId``; backends without one ignore it)."""

    query: str
    filters: tuple[FilterSpec, ...] = ()
    facets: tuple[str, ...] = ()
    sort: SortOrder = "relevance"
    offset: int = 0
    size: int = 20
    visitor_id: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S

    @classmethod
    def of(cls, query: SearchQuery, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> ExternalSearchRequest:
        """The external service's request for ``query`` (its text, page, filters, facets, sort and
        visitor), to be answered within ``timeout_s`` seconds."""
        return cls(
            query=query.text,
            filters=tuple(query.filters),
            facets=tuple(query.facets),
            sort=query.sort,
            offset=query.offset,
            size=query.size,
            visitor_id=query.visitor_id,
            timeout_s=timeout_s,
        )

    def cache_key(self) -> tuple[Any, ...]:
        """What makes two requests the same answer (``timeout_s`` aside), for a response cache."""
        filters = tuple(f.model_dump_json() for f in self.filters)
        paging = (self.sort, self.offset, self.size)
        return ("search", self.query, filters, self.facets, *paging, self.visitor_id)


@dataclass(frozen=True)
class ExternalCompleteRequest:
    """Autocomplete: up to ``size`` (1..50) completions of ``prefix``."""

    prefix: str
    size: int = 10
    visitor_id: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S


@dataclass(frozen=True)
class ExternalImageRequest:
    """Visual search: products like the JPEG or PNG ``image`` bytes, nearest first."""

    image: bytes
    size: int = 20
    filters: tuple[FilterSpec, ...] = ()
    visitor_id: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S


@dataclass(frozen=True)
class ExternalProduct:
    """One result: the product ``id``; ``fields`` its attributes by the tenant's attribute names (None when
    the backend returns ids only, to hydrate from the catalog); ``score`` the backend's, if any."""

    id: str
    fields: dict[str, Any] | None = None
    score: float | None = None


@dataclass(frozen=True)
class ExternalResult:
    """An external search's answer: a page of ``products`` (best first), ``total`` matches, ``facets``
    (attribute -> values with counts), and Google's ``corrected_query`` (the query the service searched
    instead, when it corrected it), ``redirect_uri`` (a page to send the shopper to) and
    ``attribution_token`` (to send back with events). ``backend`` names the backend type that answered."""

    backend: str
    products: list[ExternalProduct] = field(default_factory=list)
    total: int = 0
    facets: dict[str, list[FacetValue]] = field(default_factory=dict)
    corrected_query: str | None = None
    redirect_uri: str | None = None
    attribution_token: str | None = None


@dataclass(frozen=True)
class ExternalSuggestion:
    """One completion: ``text`` and its ``type`` (``query``, or what the backend calls it), and
    Google's completion ``attributes`` (attribute -> values) when given."""

    text: str
    type: str = "query"
    attributes: dict[str, list[str]] = field(default_factory=dict)


@runtime_checkable
class ExternalSearch(Protocol):
    """An external retail search backend of one tenant. Thread-safe: one instance serves every request.

    Every method raises only :class:`~aisle.search.external.errors.ExternalSearchError` subclasses:
    ``ExternalSearchUnavailable`` (down, 5xx), ``ExternalSearchTimeout`` (no answer in ``timeout_s``),
    ``ExternalSearchAuthFailed`` (401/403, unreadable secret), ``ExternalSearchRateLimited`` (429),
    ``ExternalSearchRejected`` (400: e.g. a filter on a field it lacks), ``ExternalSearchUnsupported``
    (an operation it does not offer).
    """

    name: str
    """The backend type, as in ``crs_config.json`` (``typesense``, ``google_retail``)."""

    def search(self, request: ExternalSearchRequest) -> ExternalResult:
        """A page of products for the text query with filters, facets, sort and paging."""
        ...

    def complete(self, request: ExternalCompleteRequest) -> list[ExternalSuggestion]:
        """Completions of the prefix, best first, at most ``request.size``."""
        ...

    def search_image(self, request: ExternalImageRequest) -> ExternalResult:
        """Products like the photo. Raises ``ExternalSearchUnsupported`` on a backend without it."""
        ...

    def close(self) -> None:
        """Release connections (idempotent)."""
        ...
