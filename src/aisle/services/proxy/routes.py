"""HTTP routes of the proxy service: parse, call the external search front door, shape the response.

``POST /search`` and ``GET /suggestions`` run as plain ``def`` routes (the backends' clients block; the
thread pool holds them); ``POST /images/search`` reads the upload on the event loop, then does the same.
"""

from __future__ import annotations

from typing import Annotated, Any, get_args

import orjson
from fastapi import APIRouter, File, Query, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from aisle.core.auth.scopes import SEARCH_READ
from aisle.core.validation import NOT_BLANK_PATTERN
from aisle.search.query import SearchQuery
from aisle.services.common.auth import scoped
from aisle.services.common.errors import error_responses
from aisle.services.common.outcomes import answered
from aisle.services.common.params import TENANT_PATTERN, TenantQuery
from aisle.services.proxy.schemas import EXTERNAL_ERRORS, SearchRequest, SearchResult, SuggestionItem
from aisle.services.proxy.state import Proxy
from aisle.vectors.image_input import MAX_IMAGE_BYTES, check_size

router = APIRouter()
read = scoped(SEARCH_READ)
SUGGESTION_TYPES = set(get_args(SuggestionItem.model_fields["type"].annotation))


def _json(model: Any) -> Response:
    return Response(orjson.dumps(model.model_dump(by_alias=True)), media_type="application/json")


@router.post(
    "/search",
    response_model=SearchResult,
    dependencies=[read],
    responses=error_responses(400, 401, 403, 404, 422, *EXTERNAL_ERRORS),
    summary="Search answered by the tenant's external retail search service",
)
def search(proxy: Proxy, body: SearchRequest, request: Request) -> Response:
    """The body of the search service's ``POST /search``; the answer in its shape, from the tenant's
    external service (``crs_config.json``): filters, facets, sort, paging and ``visitorId`` passed on,
    ``redirect`` and ``correctedQuery`` passed back, ``queryGraph.external`` saying which backend answered
    (with its own attribution token). ``userGroup`` plays no part. The answer carries Aisle's
    ``attributionToken``, like the search service's."""
    query = body.search_query()
    result = proxy.search(body.tenant, query)
    if body.analytics:  # a page's helper query (facet counts, price bounds) is not a shopper's search
        answered(request, body.tenant, "search", query, result)
    return _json(result)


@router.get(
    "/suggestions",
    response_model=list[SuggestionItem],
    dependencies=[scoped(SEARCH_READ, tenant_default="default")],
    responses=error_responses(401, 403, 404, 422, *EXTERNAL_ERRORS),
    summary="Autocomplete answered by the tenant's external retail search service",
)
def suggestions(
    proxy: Proxy,
    qStr: Annotated[  # the spec's parameter name
        str,
        Query(max_length=128, pattern=NOT_BLANK_PATTERN, description="What the shopper has typed so far."),
    ],
    tenant: Annotated[str, Query(pattern=TENANT_PATTERN, description="Tenant identifier.")] = "default",
    limit: Annotated[int, Query(ge=1, le=50, description="At most this many.")] = 10,
) -> Response:
    """The search service's ``GET /suggestions``, from the external service's completions (a type it
    does not name is ``query``)."""
    found = proxy.suggestions(tenant, qStr, limit)
    body = [{"suggestion": s.text, "type": s.type if s.type in SUGGESTION_TYPES else "query"} for s in found]
    return Response(orjson.dumps(body), media_type="application/json")


@router.post(
    "/images/search",
    response_model=SearchResult,
    dependencies=[read],
    responses=error_responses(400, 401, 403, 404, 413, 415, 422, *EXTERNAL_ERRORS),
    summary="Visual search answered by the tenant's external retail search service",
)
async def images_search(
    proxy: Proxy,
    request: Request,
    tenant: TenantQuery,
    file: Annotated[UploadFile, File(description=f"JPEG or PNG, at most {MAX_IMAGE_BYTES} bytes.")],
    size: Annotated[int, Query(ge=1, le=100)] = 20,
) -> Response:
    """The search service's ``POST /images/search``, answered by the external service's visual search
    (a backend without one: 409 ``external_search_unsupported``)."""
    if file.size is not None:
        check_size(file.size)
    data = await file.read(MAX_IMAGE_BYTES + 1)
    check_size(len(data))
    result = await run_in_threadpool(proxy.image_search, tenant, data, size=size)
    answered(request, tenant, "image", SearchQuery(size=size), result)
    return _json(result)
