"""Where nearest neighbours come from: this process's tables, or the vector search service over HTTP.

A :class:`NeighbourSource` answers one :class:`NeighbourQuery`; :func:`open_neighbour_source` picks the
implementation from a URI in one place, like the blob store resolver: an empty URI (or ``local:``)
searches this process's tables (:class:`LocalNeighbours`), ``http://`` or ``https://`` calls the vector
search service's ``POST /vectors/search`` (:class:`RemoteNeighbours`, the caller's token forwarded).

Filters travel as the search request's own JSON objects (``{"field", "value"}``): this layer does not
read them. The local source hands them to a :class:`RowSelector` (the search engine's, which evaluates
them with the tenant's full-text index); the remote one sends them to the service, which does the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx
import numpy as np
import orjson

from aisle.core.errors import AisleError, ErrorCode, Unavailable
from aisle.vectors.search import Neighbour, RowSelection, VectorSearch

Filters = Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class NeighbourQuery:
    """One nearest-neighbour request: exactly one of ``text`` and ``vector`` (float32, the table's
    dimension, or raw 1280-d photo features for ``kind="image"``), ``k`` in 1..1000, request filters
    (AND across fields) and product ids to leave out."""

    k: int
    text: str | None = None
    vector: np.ndarray | None = None
    kind: str = "text"
    filters: Filters = ()
    exclude: Sequence[str] = ()

    @classmethod
    def of(
        cls,
        k: int,
        *,
        text: str | None = None,
        vector: Sequence[float] | None = None,
        kind: str = "text",
        filters: Filters = (),
        exclude: Sequence[str] = (),
    ) -> NeighbourQuery:
        """The query of a request body, its ``vector`` (a JSON list of numbers) as float32."""
        array = None if vector is None else np.asarray(vector, dtype=np.float32)
        return cls(k=k, text=text, vector=array, kind=kind, filters=filters, exclude=exclude)


class RowSelector(Protocol):
    """Evaluates request filters for a tenant into the catalog rows that pass them.

    Raises BadRequest for an unknown or non-filterable field or a bad value.
    """

    def __call__(self, tenant: str, filters: Filters) -> RowSelection: ...


class NeighbourSource(Protocol):
    def check(self, tenant: str, kind: str) -> None:
        """Raise ``VectorIndexMissing`` (503) early when the answer is known to be missing (else no-op)."""
        ...

    def neighbours(
        self, tenant: str, query: NeighbourQuery, *, authorization: str | None = None
    ) -> list[Neighbour]:
        """The nearest products, nearest first. Raises the errors of ``POST /vectors/search``."""
        ...


class LocalNeighbours:
    """Neighbours from this process's vector tables (under ``AISLE_DATA_DIR``)."""

    def __init__(self, search: VectorSearch, select: RowSelector) -> None:
        self.search = search
        self.select = select

    def check(self, tenant: str, kind: str) -> None:
        self.search.store.table(tenant, kind)

    def neighbours(
        self, tenant: str, query: NeighbourQuery, *, authorization: str | None = None
    ) -> list[Neighbour]:
        self.search.check(tenant, text=query.text, vector=query.vector, k=query.k, kind=query.kind)
        allowed = None
        if query.filters:
            allowed = self.search.mask(tenant, self.select(tenant, query.filters), query.kind)
        return self.search.neighbours(
            tenant,
            text=query.text,
            vector=query.vector,
            k=query.k,
            kind=query.kind,
            allowed=allowed,
            exclude=set(query.exclude),
        )


class RemoteNeighbours:
    """Neighbours from the vector search service (``POST {url}/vectors/search``, 5 s timeout).

    Its error envelope is passed on as it came (code, message, status, Retry-After); a transport
    failure is 503 ``vector_service_unavailable``, a status outside 4xx/5xx a 502
    ``vector_service_error``.
    """

    def __init__(self, url: str, *, transport: httpx.BaseTransport | None = None) -> None:
        self.client = httpx.Client(base_url=url.rstrip("/"), timeout=5.0, transport=transport)

    def check(self, tenant: str, kind: str) -> None:
        return None  # the service answers 503 vector_index_missing itself

    def neighbours(
        self, tenant: str, query: NeighbourQuery, *, authorization: str | None = None
    ) -> list[Neighbour]:
        body: dict[str, Any] = {"k": query.k, "kind": query.kind, "filters": list(query.filters)}
        body["exclude"] = list(query.exclude)
        if query.text is not None:
            body["text"] = query.text
        else:
            body["vector"] = np.asarray(query.vector, dtype=np.float32).tolist()
        headers = {"content-type": "application/json"}
        if authorization:
            headers["authorization"] = authorization
        try:
            resp = self.client.post(
                "/vectors/search", params={"tenant": tenant}, content=orjson.dumps(body), headers=headers
            )
        except httpx.HTTPError as exc:
            raise Unavailable(
                f"the vector search service is unreachable: {exc.__class__.__name__}",
                code=ErrorCode.VECTOR_SERVICE_UNAVAILABLE,
            ) from exc
        payload = orjson.loads(resp.content) if resp.content else {}
        if resp.status_code != 200:
            err = payload.get("error") or {}
            passed = AisleError(
                err.get("message", f"vector service answered {resp.status_code}"),
                code=err.get("code", ErrorCode.VECTOR_SERVICE_ERROR),
                status=resp.status_code if 400 <= resp.status_code < 600 else 502,
                details=err.get("details"),
            )
            if "retry-after" in resp.headers:  # e.g. vectors_building: when to look again
                passed.headers = {**(passed.headers or {}), "Retry-After": resp.headers["retry-after"]}
            raise passed
        return [Neighbour(n["id"], float(n["score"])) for n in payload["neighbours"]]

    def close(self) -> None:
        self.client.close()


def open_neighbour_source(url: str | None, local: Callable[[], NeighbourSource]) -> NeighbourSource:
    """The neighbour source for ``url`` (``AISLE_VECTOR_URL``): remote for http(s), else ``local()``.

    Raises:
        ValueError: a URI scheme other than ``http``, ``https`` or ``local`` (a settings mistake).
    """
    if not url or url == "local:":
        return local()
    if url.startswith(("http://", "https://")):
        return RemoteNeighbours(url)
    raise ValueError(f"AISLE_VECTOR_URL must be empty, 'local:' or an http(s) URL, not '{url}'")
