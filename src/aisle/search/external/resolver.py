"""Choosing a tenant's external search backend from its ``crs_config.json``, in this one place."""

from __future__ import annotations

from aisle.core.crs_config import CrsConfig, GoogleRetailBackendConfig, TypesenseBackendConfig
from aisle.search.external.errors import ExternalSearchNotConfigured
from aisle.search.external.protocol import ExternalSearch


def open_external_search(crs: CrsConfig) -> ExternalSearch:
    """The backend ``crs.backend`` names (``typesense`` or ``google_retail``), ready to call.

    Opening reads the secrets the file refers to but makes no network call.

    Raises:
        ExternalSearchNotConfigured (409): ``enabled`` is false or no backend is given, or this build
            lacks the backend's client library.
        ExternalSearchAuthFailed (502): a secret reference that cannot be read.
    """
    backend = crs.backend
    if not crs.enabled or backend is None:
        raise ExternalSearchNotConfigured("the tenant has no external search service (crs_config.json)")
    if isinstance(backend, TypesenseBackendConfig):
        from aisle.search.external.external_search_typesense import TypesenseExternalSearch

        return TypesenseExternalSearch(backend, max_connections=crs.fallback.max_concurrency)
    if isinstance(backend, GoogleRetailBackendConfig):
        try:  # the optional extra `google` (google-cloud-retail, google-cloud-vision)
            from aisle.search.external.external_search_google import GoogleRetailSearch
        except ImportError as exc:
            raise ExternalSearchNotConfigured(
                f"the google_retail backend needs the 'google' extra ({exc.name} is not installed)"
            ) from exc
        return GoogleRetailSearch(backend)
    raise ExternalSearchNotConfigured(f"unknown backend {backend!r}")  # pragma: no cover
