"""``POST /vector-search`` and ``POST /images/search`` on the search service.

``/vector-search`` takes the body of ``POST /search`` and answers its shape (products, total, facets,
queryGraph; see :mod:`aisle.vectors.results`). The neighbours come from the vector search service when
``AISLE_VECTOR_URL`` is set (``POST {url}/vectors/search``, the caller's token forwarded), else from this
process's tables under ``AISLE_DATA_DIR``. A tenant without vectors answers 503 ``vector_index_missing``;
an unreachable vector service 503 ``vector_service_unavailable``.

``/images/search`` takes a multipart ``file`` (JPEG or PNG, at most 8 MiB and 40 megapixels; see
:mod:`aisle.vectors.image_input` for each 4xx) and the ``tenant`` query parameter, and answers the same
shape with the most similar product photos. Decoding and embedding run here (EfficientNet-Lite0 on
onnxruntime); the nearest-neighbour search runs where ``/vector-search``'s does. Without the image
model, 503 ``image_search_unavailable``.

This router also binds the search pipeline's hybrid stage to this process's vectors.
"""

from __future__ import annotations

import logging
import threading
from typing import Annotated, Any

import httpx
import numpy as np
import orjson
from fastapi import APIRouter, Depends, File, Query, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from aisle.core.auth.scopes import SEARCH_READ
from aisle.core.errors import AisleError, BadRequest, Unavailable
from aisle.search.model import FilterSpec, SearchResult
from aisle.search.pipeline import SearchPipeline
from aisle.search.stages.hybrid import Hybrid
from aisle.services.common.errors import error_responses
from aisle.services.search.app import SearchState
from aisle.services.search.schemas import TENANT_PATTERN, SearchRequest
from aisle.vectors.image_encoder import ImageEncoder, ImageEncoderUnavailable
from aisle.vectors.image_input import MAX_IMAGE_BYTES, check_size, decode_image
from aisle.vectors.results import pool_size, vector_search_result
from aisle.vectors.search import Neighbour, VectorSearch
from aisle.vectors.store import VectorStore

log = logging.getLogger("aisle.search")


def _json(model: Any) -> Response:
    return Response(orjson.dumps(model.model_dump(by_alias=True)), media_type="application/json")


def build_vector_router(state: SearchState) -> APIRouter:
    """Routes for vector and image search; binds ``state.pipeline``'s :class:`Hybrid` stage."""
    router = APIRouter()
    read = Depends(state.authorizer.require(SEARCH_READ))
    search = VectorSearch(VectorStore(state.settings.data_dir))
    state.pipeline = SearchPipeline(
        stages=tuple(s.bind(search) if isinstance(s, Hybrid) else s for s in state.pipeline.stages),
        budget_s=state.pipeline.budget_s,
    )

    def load_text_vectors() -> None:
        # Each tenant's table (0.3 s for Home Depot's 55k vectors) and MiniLM (~1 s): left to the first
        # hybrid query, they overran the 250 ms search deadline. has() opens the table, so every
        # tenant is asked (a list, not any(), which stopped at the first tenant with vectors).
        with_vectors = [tenant for tenant in state.tenants.names() if search.store.has(tenant)]
        if with_vectors:
            search.encode("warm up")

    state.warm_ups.append(load_text_vectors)
    remote = (
        httpx.Client(base_url=state.settings.vector_url.rstrip("/"), timeout=5.0)
        if state.settings.vector_url
        else None
    )
    image_encoder: list[ImageEncoder] = []
    encoder_lock = threading.Lock()

    def encoder(export: bool = True) -> ImageEncoder:
        if not image_encoder:
            with encoder_lock:
                if not image_encoder:
                    image_encoder.append(ImageEncoder.load(state.settings.data_dir, threads=1, export=export))
        return image_encoder[0]

    def load_image_search() -> None:
        # The photo model, its first run and each tenant's photo table: the first image search took
        # 0.32 s on fashion (later ones 20 ms). Never exports the model here (tens of seconds): a table
        # implies it exists.
        if remote is None and [t for t in state.tenants.names() if search.store.has(t, "image")]:
            from PIL import Image

            try:
                encoder(export=False).encode([Image.new("RGB", (224, 224))])
            except ImageEncoderUnavailable as exc:
                log.warning("image search not warmed up: %s", exc.message)

    state.warm_ups.append(load_image_search)

    def neighbours(
        request: Request,
        tenant: str,
        *,
        text: str | None = None,
        vector: np.ndarray | None = None,
        k: int,
        filters: list[FilterSpec],
        kind: str = "text",
        exclude: list[str] | None = None,
    ) -> list[Neighbour]:
        if remote is None:
            index = state.indexes.get(tenant) if filters else None
            return search.neighbours(
                tenant,
                index,
                text=text,
                vector=vector,
                k=k,
                filters=filters,
                kind=kind,
                exclude=set(exclude or []),
            )
        body: dict[str, Any] = {"k": k, "kind": kind, "filters": [f.model_dump() for f in filters]}
        body["exclude"] = exclude or []
        if text is not None:
            body["text"] = text
        else:
            body["vector"] = np.asarray(vector, dtype=np.float32).tolist()
        headers = {"content-type": "application/json"}
        if "authorization" in request.headers:
            headers["authorization"] = request.headers["authorization"]
        try:
            resp = remote.post(
                "/vectors/search", params={"tenant": tenant}, content=orjson.dumps(body), headers=headers
            )
        except httpx.HTTPError as exc:
            raise Unavailable(
                f"the vector search service is unreachable: {exc.__class__.__name__}",
                code="vector_service_unavailable",
            ) from exc
        payload = orjson.loads(resp.content) if resp.content else {}
        if resp.status_code != 200:
            err = payload.get("error") or {}
            raise AisleError(
                err.get("message", f"vector service answered {resp.status_code}"),
                code=err.get("code", "vector_service_error"),
                status=resp.status_code if 400 <= resp.status_code < 600 else 502,
                details=err.get("details"),
            )
        return [Neighbour(n["id"], float(n["score"])) for n in payload["neighbours"]]

    @router.post(
        "/vector-search",
        response_model=SearchResult,
        dependencies=[read],
        responses=error_responses(400, 401, 403, 404, 422, 503),
        summary="Semantic (embedding) search",
    )
    def vector_search(request: Request, body: SearchRequest) -> Response:
        """The query embedded with MiniLM (all-MiniLM-L6-v2) and matched by approximate nearest-neighbour
        search over the tenant's product embeddings, within the request filters. Same body and response
        shape as ``POST /search``; ``total`` and facets cover the nearest-neighbour pool (at least 200)."""
        if not body.query.strip():
            raise BadRequest("vector search needs a non-empty query", code="query_required")
        index = state.indexes.get(body.tenant)
        config = state.tenants.config(body.tenant)
        found = neighbours(
            request, body.tenant, text=body.query, k=pool_size(body.size, body.from_), filters=body.filters
        )
        result = vector_search_result(
            index,
            config,
            body.query,
            found,
            size=body.size,
            offset=body.from_,
            filters=body.filters,
            facets=body.facets,
            sort=body.sort,
        )
        return _json(result)

    @router.post(
        "/images/search",
        response_model=SearchResult,
        dependencies=[read],
        responses=error_responses(400, 401, 403, 404, 413, 415, 422, 503),
        summary="Visually similar products",
    )
    async def images_search(
        request: Request,
        tenant: Annotated[str, Query(pattern=TENANT_PATTERN, description="Tenant identifier.")],
        file: Annotated[UploadFile, File(description=f"JPEG or PNG, at most {MAX_IMAGE_BYTES} bytes.")],
        size: Annotated[int, Query(ge=1, le=100)] = 20,
        exclude: Annotated[
            str | None, Query(max_length=256, description="A product id to leave out.")
        ] = None,
    ) -> Response:
        """Products whose photos look most like the upload (EfficientNet-Lite0 features with the
        tenant's label probe). Limits: 8 MiB, 40 megapixels, JPEG or PNG (each refusal a 4xx)."""
        if file.size is not None:
            check_size(file.size)
        data = await file.read(MAX_IMAGE_BYTES + 1)

        def work() -> Response:
            index = state.indexes.get(tenant)
            config = state.tenants.config(tenant)
            image = decode_image(data)  # bad input is the caller's 4xx whatever the server's state
            if remote is None:
                search.store.table(tenant, "image")  # 503 vector_index_missing before embedding
            features = encoder().encode([image])[0]
            found = neighbours(
                request,
                tenant,
                vector=features,
                k=pool_size(size, 0),
                filters=[],
                kind="image",
                exclude=[exclude] if exclude else None,
            )
            return _json(vector_search_result(index, config, "", found, size=size))

        return await run_in_threadpool(work)

    return router
