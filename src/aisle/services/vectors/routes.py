"""HTTP routes of the vector search service (plain ``def``: ANN and ONNX run in the thread pool)."""

from __future__ import annotations

from fastapi import APIRouter

from aisle.core.auth.scopes import CATALOG_WRITE, SEARCH_READ
from aisle.services.common.auth import scoped
from aisle.services.common.errors import error_responses
from aisle.services.common.params import TenantQuery
from aisle.services.vectors.schemas import (
    DeleteBody,
    IndexBody,
    NeighbourOut,
    TableInfo,
    TenantVectorsInfo,
    VectorSearchBody,
    VectorSearchResponse,
    WriteResponse,
)
from aisle.services.vectors.state import State
from aisle.vectors.neighbours import NeighbourQuery
from aisle.vectors.store import VectorIndexMissing
from aisle.vectors.table import KINDS

router = APIRouter()
read = scoped(SEARCH_READ)
write = scoped(CATALOG_WRITE)


@router.post(
    "/vectors/search",
    response_model=VectorSearchResponse,
    dependencies=[read],
    responses=error_responses(400, 401, 403, 404, 422, 503),
)
def search(state: State, tenant: TenantQuery, body: VectorSearchBody) -> VectorSearchResponse:
    """The ``k`` products nearest to a text or a vector, passing the filters (AND across fields)."""
    state.tenants.config(tenant)  # 404 tenant_not_found before anything else
    query = NeighbourQuery.of(
        body.k,
        text=body.text,
        vector=body.vector,
        kind=body.kind,
        filters=[f.model_dump() for f in body.filters],
        exclude=body.exclude,
    )
    found = state.neighbours.neighbours(tenant, query)
    return VectorSearchResponse(
        tenant=tenant, kind=body.kind, neighbours=[NeighbourOut(id=n.id, score=n.score) for n in found]
    )


@router.put(
    "/vectors",
    response_model=WriteResponse,
    dependencies=[write],
    responses=error_responses(400, 401, 403, 404, 422, 503),
)
def index_vectors(state: State, tenant: TenantQuery, body: IndexBody) -> WriteResponse:
    """Insert or replace products' vectors (given, or embedded from ``text``). Durable on return: in the
    bucket's vector write log, served by this replica at once and by every other within
    ``AISLE_VECTORS_CHECK_SECONDS``; a bucket outage answers 503 ``storage_unavailable``, nothing
    written."""
    state.tenants.config(tenant)
    count = state.search.index(tenant, [(i.id, i.vector, i.text) for i in body.items], kind=body.kind)
    return WriteResponse(
        tenant=tenant, kind=body.kind, count=count, total=len(state.store.table(tenant, body.kind))
    )


@router.delete(
    "/vectors",
    response_model=WriteResponse,
    dependencies=[write],
    responses=error_responses(401, 403, 404, 422, 503),
)
def delete_vectors(state: State, tenant: TenantQuery, body: DeleteBody) -> WriteResponse:
    """Remove products' vectors; ids without a vector are ignored (``count`` says how many went). Durable
    and served by every replica like ``PUT /vectors``."""
    state.tenants.config(tenant)
    count = state.store.delete(tenant, body.ids, kind=body.kind)
    return WriteResponse(
        tenant=tenant, kind=body.kind, count=count, total=len(state.store.table(tenant, body.kind))
    )


@router.get(
    "/vectors",
    response_model=TenantVectorsInfo,
    dependencies=[read],
    responses=error_responses(401, 403, 404, 422),
)
def info(state: State, tenant: TenantQuery) -> TenantVectorsInfo:
    """The tenant's vector tables (kind, catalog version, count, dimension); empty when none built."""
    state.tenants.config(tenant)
    tables = []
    for kind in KINDS:
        try:
            table = state.store.table(tenant, kind)
        except VectorIndexMissing:
            continue
        tables.append(
            TableInfo(
                kind=kind,  # type: ignore[arg-type]
                catalog_version=table.version,
                count=len(table),
                dimension=table.dimension,
            )
        )
    return TenantVectorsInfo(tenant=tenant, tables=tables)
