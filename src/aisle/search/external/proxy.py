"""Front door of the catalog-search proxy service (port 8082): a tenant's search, autocomplete and visual
search answered by its external retail search service (``crs_config.json``), in Aisle's shapes.

Each call goes through the tenant's :class:`~aisle.search.external.guarded.GuardedExternalSearch` (circuit
breaker, bounded slots, short cache) with ``fallback.timeout_ms`` as its budget; products the backend
returns as ids only are hydrated from the tenant's catalog.
"""

from __future__ import annotations

import time

from aisle.core.config import Settings
from aisle.core.errors import AisleError
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.search.external.guarded import GuardedExternalSearch
from aisle.search.external.hydrate import external_search_result
from aisle.search.external.protocol import (
    ExternalCompleteRequest,
    ExternalImageRequest,
    ExternalProduct,
    ExternalSearchRequest,
    ExternalSuggestion,
)
from aisle.search.external.registry import ExternalSearches
from aisle.search.index.reader import TenantIndex
from aisle.search.indexes import IndexRegistry
from aisle.search.model import SearchResult
from aisle.search.query import SearchQuery
from aisle.vectors.image_input import decode_image


class ExternalSearchProxy:
    """Search, suggestions and image search of every tenant through its external service.

    Errors (every method): TenantNotFound (404), ConfigInvalid (503 ``tenant_config_invalid``),
    ExternalSearchNotConfigured (409), and the backend's: ExternalSearchUnavailable (502, also when the
    breaker is open), ExternalSearchAuthFailed (502), ExternalSearchRateLimited (503),
    ExternalSearchTimeout (504, also when every slot stays busy), ExternalSearchRejected (400),
    ExternalSearchUnsupported (409).
    """

    def __init__(self, tenants: Tenants, indexes: IndexRegistry, external: ExternalSearches) -> None:
        self.tenants = tenants
        self.indexes = indexes
        self.external = external

    @classmethod
    def from_settings(cls, settings: Settings, store: BlobStore) -> ExternalSearchProxy:
        tenants = Tenants(store)
        return cls(tenants, IndexRegistry(tenants, settings.data_dir), ExternalSearches())

    def backend(self, tenant: str) -> tuple[GuardedExternalSearch, float]:
        """The tenant's guarded backend and the call budget in seconds (``fallback.timeout_ms``)."""
        crs = self.tenants.config(tenant).crs
        return self.external.get(tenant, crs), crs.fallback.timeout_ms / 1000

    def search(self, tenant: str, query: SearchQuery) -> SearchResult:
        """A page of the external service's results for ``query`` as a search response
        (``queryGraph.external`` reason ``proxy``; ``redirect``, ``correctedQuery``, ``attributionToken``
        as it gave them; ``query.user_group`` plays no part)."""
        guarded, budget = self.backend(tenant)
        started = time.perf_counter()
        result, cached = guarded.search(ExternalSearchRequest.of(query, timeout_s=budget))
        index = self._index_for(tenant, result.products)
        took = round((time.perf_counter() - started) * 1000, 3)
        shaped = external_search_result(result, index, query.text, took_ms=took)
        if shaped.query_graph.external is not None:
            shaped.query_graph.external.cached = cached
        return shaped

    def suggestions(self, tenant: str, prefix: str, limit: int = 10) -> list[ExternalSuggestion]:
        """Completions of ``prefix``, at most ``limit``."""
        guarded, budget = self.backend(tenant)
        return guarded.complete(ExternalCompleteRequest(prefix=prefix, size=limit, timeout_s=budget))

    def image_search(self, tenant: str, data: bytes, *, size: int = 20) -> SearchResult:
        """Products like the JPEG or PNG ``data``. Raises ImageRejected (4xx) for a file that is not a
        readable image, before the external service is asked."""
        guarded, budget = self.backend(tenant)
        decode_image(data)  # bad input is the caller's 4xx, whatever the backend
        started = time.perf_counter()
        result = guarded.search_image(ExternalImageRequest(image=data, size=size, timeout_s=budget))
        index = self._index_for(tenant, result.products)
        took = round((time.perf_counter() - started) * 1000, 3)
        return external_search_result(result, index, "", took_ms=took)

    def _index_for(self, tenant: str, products: list[ExternalProduct]) -> TenantIndex | None:
        """The tenant's catalog when some product needs hydrating (None: none needed, or no catalog)."""
        if all(p.fields is not None for p in products):
            return None
        try:
            return self.indexes.get(tenant)
        except AisleError:
            return None  # no catalog: id-only products cannot be shown

    def close(self) -> None:
        self.external.close()
