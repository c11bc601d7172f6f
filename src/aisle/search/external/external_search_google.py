"""``GoogleRetailSearch``: the ``google_retail`` backend of ``crs_config.json`` (an :class:`ExternalSearch`).

Text search and autocomplete go to Google Cloud Retail (Vertex AI Search for commerce) through
``google-cloud-retail``'s REST transport (``servingConfigs/*:search``, ``catalogs/*:completeQuery``);
photo search to the Vision API Product Search (``images:annotate`` with ``productSearchParams``),
through ``google-cloud-vision``'s REST transport, since Retail v2 has none. Results are product ids
(Retail guarantees only ``Product.name``): callers hydrate them from the tenant's catalog
(:func:`aisle.search.external.hydrate.hydrate`).

Credentials: ``credentials`` in ``crs_config.json`` refers to a service account key (the JSON in the
file or variable, or a variable holding the key file's path); none means Application Default
Credentials over ``https``, and no credentials at all over ``http`` (a local emulator or stand-in: a
plain-HTTP endpoint is never Google's, so no token is sent to it).

Every call takes its ``timeout_s`` as the HTTP timeout and is not retried here (the fallback stage and
the proxy own retries and the circuit breaker); Google's errors become the
:mod:`aisle.search.external.errors` hierarchy by HTTP status (401/403 auth, 429 rate limited, 408/504
timeout, 404 (a project, catalog or serving config that does not exist) and 5xx unavailable, other 4xx
rejected). The timeout bounds each HTTP exchange (connecting, and each read): a call that must
first fetch an access token (hourly, with a service account key) makes two exchanges, and one whose
token Google refuses renews it once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests
from google.api_core import exceptions as google_errors
from google.auth import credentials as google_credentials
from google.auth import exceptions as auth_errors
from google.cloud import retail_v2, vision_v1
from google.cloud.retail_v2.services.completion_service.transports.rest import CompletionServiceRestTransport
from google.cloud.retail_v2.services.search_service.transports.rest import SearchServiceRestTransport
from google.cloud.vision_v1.services.image_annotator.transports.rest import ImageAnnotatorRestTransport
from google.oauth2 import service_account

from aisle.core.crs_config import GoogleRetailBackendConfig, SecretRef
from aisle.search.external.errors import (
    ExternalSearchAuthFailed,
    ExternalSearchError,
    ExternalSearchTimeout,
    ExternalSearchUnavailable,
    ExternalSearchUnsupported,
    error_for_status,
)
from aisle.search.external.google_translate import (
    annotate_request,
    complete_request,
    image_matches,
    search_page,
    search_request,
    vision_filter,
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

SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
RETAIL_HOST = "retail.googleapis.com"
VISION_HOST = "vision.googleapis.com"


class _Anonymous(google_credentials.AnonymousCredentials):
    """No credentials; a 401 (which makes the session refresh them) is Google's auth error, not a
    ValueError from ``AnonymousCredentials.refresh``."""

    def refresh(self, request: Any) -> None:
        raise auth_errors.RefreshError("the service refused a request sent without credentials")


def load_credentials(ref: SecretRef | None, url_scheme: str) -> google_credentials.Credentials:
    """Google credentials for a backend (module docstring).

    Raises:
        ExternalSearchAuthFailed (502): the reference is unreadable or not a service account key, or no
            Application Default Credentials exist.
    """
    if ref is None:
        if url_scheme == "http":
            return _Anonymous()
        import google.auth

        try:
            creds, _ = google.auth.default(scopes=SCOPES)
        except auth_errors.DefaultCredentialsError as exc:
            raise ExternalSearchAuthFailed(f"no Google credentials: {exc}") from exc
        return creds
    secret = read_secret(ref)
    where = f"environment variable {ref.env}" if ref.env else f"file {ref.file}"
    try:
        text = secret if secret.lstrip().startswith("{") else Path(secret).read_text(encoding="utf-8")
        info = json.loads(text)
        return service_account.Credentials.from_service_account_info(info, scopes=SCOPES)  # type: ignore[no-any-return]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        # Never the key's text in the message: only where it came from and what was wrong.
        raise ExternalSearchAuthFailed(
            f"the {where} (crs_config.json credentials) is not a service account key: "
            f"{exc.__class__.__name__}"
        ) from None


@contextmanager
def google_call(what: str, timeout_s: float) -> Iterator[None]:
    """Google's and the HTTP stack's exceptions as :class:`ExternalSearchError` (module docstring)."""
    try:
        yield
    except ExternalSearchError:
        raise
    except google_errors.GoogleAPICallError as exc:
        status = exc.code if isinstance(exc.code, int) else 502
        if status == 404:  # no such project, catalog or serving config: crs_config.json names a wrong one
            raise ExternalSearchUnavailable(
                f"{what} answered 404 (check crs_config.json): {exc.message}"
            ) from exc
        raise error_for_status(status, f"{what} answered {status}: {exc.message}") from exc
    except requests.exceptions.Timeout as exc:
        raise ExternalSearchTimeout(f"{what} did not answer within {timeout_s:.3g} s") from exc
    except auth_errors.RefreshError as exc:
        raise ExternalSearchAuthFailed(f"{what}: the credentials were refused ({exc})") from exc
    except (requests.exceptions.RequestException, auth_errors.TransportError) as exc:
        raise ExternalSearchUnavailable(f"{what} cannot be reached: {exc.__class__.__name__}") from exc
    except ValueError as exc:  # an answer that is not the JSON of the message
        raise ExternalSearchUnavailable(f"{what} gave an unreadable answer: {exc}") from exc


class GoogleRetailSearch:
    """Google Cloud Retail (+ Vision Product Search) for one tenant; thread-safe (``requests`` sessions).

    Args:
        config: the ``backend`` of the tenant's ``crs_config.json`` (``type: google_retail``).
        credentials: overrides ``config.credentials`` (tests, or a caller holding its own).
        field_map: Aisle attribute -> Retail key, over ``google_filter.DEFAULT_FIELD_MAP``.

    Raises (on construction): ExternalSearchAuthFailed, see :func:`load_credentials`.
    """

    name = "google_retail"

    def __init__(
        self,
        config: GoogleRetailBackendConfig,
        *,
        credentials: google_credentials.Credentials | None = None,
        field_map: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.field_map = dict(field_map or {})
        creds = credentials or load_credentials(config.credentials, config.url_scheme)
        host, scheme = config.endpoint or RETAIL_HOST, config.url_scheme
        catalog = f"projects/{config.project}/locations/{config.location}/catalogs/{config.catalog}"
        self.catalog_name = catalog
        self.placement = f"{catalog}/servingConfigs/{config.serving_config}"
        self._search = retail_v2.SearchServiceClient(
            transport=SearchServiceRestTransport(host=host, credentials=creds, url_scheme=scheme)
        )
        self._complete = retail_v2.CompletionServiceClient(
            transport=CompletionServiceRestTransport(host=host, credentials=creds, url_scheme=scheme)
        )
        self._vision: vision_v1.ImageAnnotatorClient | None = None
        if config.vision is not None:
            vision_host = config.vision.endpoint or VISION_HOST
            self._vision = vision_v1.ImageAnnotatorClient(
                transport=ImageAnnotatorRestTransport(host=vision_host, credentials=creds, url_scheme=scheme)
            )

    def search(self, request: ExternalSearchRequest) -> ExternalResult:
        """One page from the serving config: ids (to hydrate), total, facets and Google's signals.

        Raises the :mod:`errors` hierarchy; a filter or facet on an attribute with no Retail key is
        ``filter_not_allowed`` (400) before any call.
        """
        message = search_request(
            self.placement,
            request.query,
            filters=request.filters,
            facets=request.facets,
            sort=request.sort,
            size=request.size,
            offset=request.offset,
            visitor_id=request.visitor_id,
            field_map=self.field_map,
        )
        with google_call("Google Retail search", request.timeout_s):
            pager = self._search.search(request=message, retry=None, timeout=request.timeout_s)
            response = next(iter(pager.pages))  # the first page only: no further request
        page = search_page(response, request.facets, self.field_map)
        ids = page.ids[: request.size]
        return ExternalResult(
            backend=self.name,
            products=[ExternalProduct(id=pid) for pid in ids],
            total=page.total,
            facets=page.facets,
            corrected_query=page.corrected_query,
            redirect_uri=page.redirect_uri,
            attribution_token=page.attribution_token,
        )

    def complete(self, request: ExternalCompleteRequest) -> list[ExternalSuggestion]:
        """Completions from ``catalogs/*:completeQuery`` (Retail caps them at 20)."""
        message = complete_request(
            self.catalog_name, request.prefix, size=request.size, visitor_id=request.visitor_id
        )
        with google_call("Google Retail completeQuery", request.timeout_s):
            response = self._complete.complete_query(request=message, retry=None, timeout=request.timeout_s)
        out = []
        for result in response.completion_results:
            if result.suggestion:
                attrs = {k: [*v.text, *(str(n) for n in v.numbers)] for k, v in result.attributes.items()}
                out.append(ExternalSuggestion(text=result.suggestion, attributes=attrs))
        return out[: request.size]

    def search_image(self, request: ExternalImageRequest) -> ExternalResult:
        """Products like the photo from Vision Product Search, best first, with Vision's scores.

        Raises ExternalSearchUnsupported (409) when ``crs_config.json`` has no ``vision`` section.
        """
        vision = self.config.vision
        if self._vision is None or vision is None:
            raise ExternalSearchUnsupported(
                "this google_retail backend has no Vision Product Search (vision)"
            )
        message = annotate_request(
            request.image,
            product_set=vision.product_set,
            categories=vision.product_categories,
            size=max(1, request.size),
            label_filter=vision_filter(request.filters),
        )
        with google_call("Vision Product Search", request.timeout_s):
            batch = self._vision.batch_annotate_images(
                requests=[message], retry=None, timeout=request.timeout_s
            )
            answer = batch.responses[0] if batch.responses else vision_v1.AnnotateImageResponse()
            if answer.error.code:
                raise google_errors.from_grpc_status(answer.error.code, answer.error.message)
        matches = image_matches(answer)[: request.size]
        return ExternalResult(
            backend=self.name,
            products=[ExternalProduct(id=pid, score=score) for pid, score in matches],
            total=len(matches),
        )

    def close(self) -> None:
        """Close the HTTP sessions (idempotent)."""
        clients: list[Any] = [self._search, self._complete, self._vision]
        for client in clients:
            if client is not None:
                client.transport.close()
