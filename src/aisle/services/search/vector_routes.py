"""``POST /vector-search`` and ``POST /images/search`` on the search service.

``/vector-search`` takes the body of ``POST /search`` and answers its shape (products, total, facets,
queryGraph; see :mod:`aisle.search.semantic`). The neighbours come from the vector search service when
``AISLE_VECTOR_URL`` is set (``POST {url}/vectors/search``, the caller's token forwarded), else from this
process's tables under ``AISLE_DATA_DIR`` (:mod:`aisle.vectors.neighbours`). A tenant without vectors
answers 503 ``vector_index_missing``, or 503 ``vectors_building`` (with ``Retry-After``) while a
background build of them runs (they are served within seconds of landing, without a restart); an
unreachable vector service 503 ``vector_service_unavailable``.

``/images/search`` takes a multipart ``file`` (JPEG or PNG, at most 8 MiB and 40 megapixels; see
:mod:`aisle.vectors.image_input` for each 4xx) and the ``tenant`` query parameter, and answers the same
shape with the most similar product photos. Decoding and embedding run here (EfficientNet-Lite0 on
onnxruntime); the nearest-neighbour search runs where ``/vector-search``'s does. Without the image
model, 503 ``image_search_unavailable``.
"""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from fastapi import APIRouter, File, Query, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from aisle.core.auth.scopes import SEARCH_READ
from aisle.search.model import SearchResult
from aisle.search.query import SearchQuery
from aisle.services.common.auth import scoped
from aisle.services.common.errors import error_responses
from aisle.services.common.metrics import count_tenant
from aisle.services.common.params import TenantQuery
from aisle.services.search.schemas import SearchRequest
from aisle.services.search.state import State
from aisle.vectors.image_input import MAX_IMAGE_BYTES, check_size

router = APIRouter()
read = scoped(SEARCH_READ)
VECTORS_UNAVAILABLE_DOC = (
    "the tenant's vectors are not there: vector_index_missing (never built), vectors_building (a "
    "background build runs; Retry-After is its remaining time, 5-120 s; search answers lexically "
    "meanwhile), vector_service_unavailable, image_search_unavailable (no photo model), or a backend "
    "such as object storage is down; Retry-After says when to retry"
)


def _responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    out = error_responses(*statuses)
    out[503] = {**out[503], "description": VECTORS_UNAVAILABLE_DOC}
    return out


def _json(model: Any) -> Response:
    return Response(orjson.dumps(model.model_dump(by_alias=True)), media_type="application/json")


@router.post(
    "/vector-search",
    response_model=SearchResult,
    dependencies=[read, count_tenant("search")],
    responses=_responses(400, 401, 403, 404, 422, 503),
    summary="Semantic (embedding) search",
)
def vector_search(state: State, request: Request, body: SearchRequest) -> Response:
    """The query embedded with MiniLM (all-MiniLM-L6-v2) and matched by approximate nearest-neighbour
    search over the tenant's product embeddings, within the request filters. Same body and response
    shape as ``POST /search``; ``total`` and facets cover the nearest-neighbour pool (at least 200)."""
    authorization = request.headers.get("authorization")
    query = body.search_query()
    result = state.engine.vector_search(body.tenant, query, authorization=authorization)
    if state.outcomes is not None:
        state.outcomes.search_answer(body.tenant, "vector", query, result)
    return _json(result)


@router.post(
    "/images/search",
    response_model=SearchResult,
    dependencies=[read, count_tenant("search")],
    responses=_responses(400, 401, 403, 404, 413, 415, 422, 503),
    summary="Visually similar products",
)
async def images_search(
    state: State,
    request: Request,
    tenant: TenantQuery,
    file: Annotated[UploadFile, File(description=f"JPEG or PNG, at most {MAX_IMAGE_BYTES} bytes.")],
    size: Annotated[int, Query(ge=1, le=100)] = 20,
    exclude: Annotated[str | None, Query(max_length=256, description="A product id to leave out.")] = None,
) -> Response:
    """Products whose photos look most like the upload (EfficientNet-Lite0 features with the
    tenant's label probe). Limits: 8 MiB, 40 megapixels, JPEG or PNG (each refusal a 4xx)."""
    if file.size is not None:
        check_size(file.size)
    data = await file.read(MAX_IMAGE_BYTES + 1)
    result = await run_in_threadpool(
        state.engine.image_search,
        tenant,
        data,
        size=size,
        exclude=[exclude] if exclude else [],
        authorization=request.headers.get("authorization"),
    )
    if state.outcomes is not None:
        state.outcomes.search_answer(tenant, "image", SearchQuery(size=size), result)
    return _json(result)
