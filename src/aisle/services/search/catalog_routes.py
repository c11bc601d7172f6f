"""The product API on the search service: product writes and reads through the catalog change log.

``PUT``/``PATCH``/``DELETE /products/{id}``, ``POST /products/batch``, ``POST /catalog/import`` and the
store inventories ``PUT /products/{id}/inventory/{storeId}`` and ``POST /products/inventory/batch`` (scope
``catalog:write``), ``GET /products/{id}`` (``catalog:read``) and ``GET /stores`` (``search:read``: the
storefront's store picker). Each write answers once its change-log
entry is in the bucket, with the tenant's catalog ``sequence``; every search process applies the entry
to its open index within about ``AISLE_CATALOG_FOLLOW_SECONDS`` (:mod:`aisle.search.indexes`), and a
search answers the ``catalogSequence`` it reflects. Compaction folds the log into a new catalog version
in the background (``AISLE_CATALOG_COMPACT_SECONDS``, 60 s). The engine's front door is
:class:`aisle.catalog.writer.CatalogWriter`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, Path, Query, Request
from fastapi.concurrency import run_in_threadpool

from aisle.catalog.writer import CatalogWriter
from aisle.core.auth.scopes import CATALOG_READ, CATALOG_WRITE, SEARCH_READ
from aisle.core.errors import AisleError, BadRequest, ErrorCode
from aisle.core.stock import STORE_ID_PATTERN
from aisle.core.validation import EXTERNAL_ID_PATTERN
from aisle.services.common.auth import scoped
from aisle.services.common.errors import error_responses
from aisle.services.common.params import TenantQuery
from aisle.services.search.catalog_schemas import (
    PRODUCT_EXAMPLE,
    PRODUCT_SCHEMA,
    BatchAnswer,
    BatchRequest,
    ImportAnswer,
    InventoryBatchAnswer,
    InventoryBatchRequest,
    InventoryBody,
    ProductAnswer,
    StoresAnswer,
    WriteAnswer,
)

router = APIRouter(tags=["products"])
write = scoped(CATALOG_WRITE)
read = scoped(CATALOG_READ)
WRITES = error_responses(400, 401, 403, 404, 422, 503)
FORMATS = {
    "application/x-ndjson": "jsonl",
    "application/jsonl": "jsonl",
    "text/csv": "csv",
    "application/vnd.apache.parquet": "parquet",
}
IMPORT_BODY = {
    "required": True,
    "content": {
        "application/x-ndjson": {"schema": {"type": "string"}},
        "text/csv": {"schema": {"type": "string"}},
        "application/vnd.apache.parquet": {"schema": {"type": "string", "format": "binary"}},
    },
}


async def _writer(request: Request) -> CatalogWriter:
    return request.app.state.catalog  # type: ignore[no-any-return]


Writer = Annotated[CatalogWriter, Depends(_writer)]
ProductId = Annotated[
    str,
    Path(pattern=EXTERNAL_ID_PATTERN, description="The product id: 1-256 characters, no control characters."),
]
ProductBody = Annotated[
    dict[str, Any], Body(description=PRODUCT_SCHEMA["description"], examples=[PRODUCT_EXAMPLE])
]
StoreId = Annotated[
    str, Path(pattern=STORE_ID_PATTERN, description="The store id: 1-64 letters, digits, '_', '.' or '-'.")
]
UpdateTime = Annotated[
    str | None, Query(alias="updateTime", max_length=64, description="The delete's time (RFC 3339).")
]


@router.put(
    "/products/{product_id}",
    response_model=WriteAnswer,
    dependencies=[write],
    responses=WRITES,
    summary="Create or replace a product",
)
def put_product(writer: Writer, tenant: TenantQuery, product_id: ProductId, body: ProductBody) -> WriteAnswer:
    """The whole product: fields it does not give are null. Answered once the write is durable, with
    the tenant's catalog sequence; ``status`` is ``stale`` when a newer write of the product is stored.
    422 ``product_invalid`` names a field that breaks the tenant's attribute configuration."""
    return WriteAnswer.of_outcome(writer.upsert(tenant, product_id, body))


@router.patch(
    "/products/{product_id}",
    response_model=WriteAnswer,
    dependencies=[write],
    responses=WRITES,
    summary="Change some fields of a product (JSON merge patch)",
    description="RFC 7396 merge patch, sent as `application/merge-patch+json` (its media type) or "
    "`application/json` (the one documented here: a client generator makes one body model of it): only the "
    "fields given change, `null` removes one. A field whose stored write is newer than `updateTime` is left "
    "out (`staleFields`); all of them: `status` `stale`. 404 for a product that does not exist.",
)
def patch_product(
    writer: Writer, tenant: TenantQuery, product_id: ProductId, body: ProductBody
) -> WriteAnswer:
    """RFC 7396 merge patch (``application/merge-patch+json`` or ``application/json``): only the fields
    given change, ``null`` removes one. A field whose stored write is newer than ``updateTime`` is left
    out (``staleFields``); all of them: ``status`` ``stale``. 404 for a product that does not exist."""
    return WriteAnswer.of_outcome(writer.patch(tenant, product_id, body))


@router.delete(
    "/products/{product_id}",
    response_model=WriteAnswer,
    dependencies=[write],
    responses=error_responses(400, 401, 403, 404, 422, 503),
    summary="Delete a product",
)
def delete_product(
    writer: Writer, tenant: TenantQuery, product_id: ProductId, update_time: UpdateTime = None
) -> WriteAnswer:
    """Delete the product; ``stale`` when a write newer than ``updateTime`` is stored. 404 for an id
    never written."""
    return WriteAnswer.of_outcome(writer.delete(tenant, product_id, update_time))


@router.get(
    "/products/{product_id}",
    response_model=ProductAnswer,
    dependencies=[read],
    responses=error_responses(401, 403, 404, 422, 503),
    summary="A product as stored now",
)
def get_product(writer: Writer, tenant: TenantQuery, product_id: ProductId) -> ProductAnswer:
    """The product with its update times and the catalog sequence the answer reflects: the last catalog
    version plus the change log (a write is here as soon as it is acknowledged, and searchable once each
    search process has applied it: tens of milliseconds)."""
    return ProductAnswer.of(writer.product(tenant, product_id))


@router.post(
    "/products/batch",
    response_model=BatchAnswer,
    dependencies=[write],
    responses=error_responses(400, 401, 403, 404, 413, 422, 503),
    summary="Up to 10,000 product operations as one write",
)
def batch(writer: Writer, tenant: TenantQuery, body: BatchRequest) -> BatchAnswer:
    """Upserts, merge patches and deletes, applied in order as one change-log entry, with one result
    per operation: ``applied``, ``stale`` or ``failed`` (a code and a message; the field at fault). A bad
    operation fails alone. More than 10,000 operations: 413 ``batch_too_large``, nothing written."""
    operations = [op.model_dump(exclude_none=True) for op in body.operations]
    return BatchAnswer.of(writer.batch(tenant, operations))


@router.post(
    "/products/inventory/batch",
    response_model=InventoryBatchAnswer,
    dependencies=[write],
    responses=error_responses(400, 401, 403, 404, 413, 422, 503),
    summary="Up to 10,000 store inventories as one write",
)
def inventory_batch(writer: Writer, tenant: TenantQuery, body: InventoryBatchRequest) -> InventoryBatchAnswer:
    """Store inventories ``{id, storeId, availability, quantity?, updateTime?}``, applied in order as one
    change-log entry, each merged by its store's own update time, with one result per operation:
    ``applied``, ``stale`` or ``failed`` (``product_invalid`` naming the field, ``product_not_found``,
    ``update_time_invalid``). A bad operation fails alone. More than 10,000: 413 ``batch_too_large``."""
    operations = [op.model_dump(exclude_none=True) for op in body.operations]
    outcome = writer.inventory_batch(tenant, operations)
    return InventoryBatchAnswer.of(outcome, [op.storeId for op in body.operations])


@router.put(
    "/products/{product_id}/inventory/{store_id}",
    response_model=WriteAnswer,
    dependencies=[write],
    responses=WRITES,
    summary="Set one store's inventory of a product",
)
def put_inventory(
    writer: Writer, tenant: TenantQuery, product_id: ProductId, store_id: StoreId, body: InventoryBody
) -> WriteAnswer:
    """The store's availability and quantity, merged by that store's own update time (as Google Retail's
    ``addLocalInventories``): ``stale`` (``staleFields`` ``inventories/<storeId>``) when the stored entry
    is newer; other stores and fields are untouched. A search with ``storeId`` filters or boosts by it.
    404 ``product_not_found`` for a product that does not exist."""
    return WriteAnswer.of_outcome(
        writer.inventory(tenant, product_id, store_id, body.model_dump(exclude_none=True))
    )


@router.get(
    "/stores",
    response_model=StoresAnswer,
    dependencies=[scoped(SEARCH_READ)],
    responses=error_responses(401, 403, 404, 422, 503),
    summary="The stores the tenant's products list inventory for",
)
def stores(writer: Writer, tenant: TenantQuery) -> StoresAnswer:
    """Every store id some product has an inventory entry for, sorted (the storefront's store picker)."""
    return StoresAnswer(stores=writer.stores(tenant))


def _format(request: Request, given: str | None) -> str:
    """The body's catalog format: ``format``, else its content type."""
    if given is not None:
        return given
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media in FORMATS:
        return FORMATS[media]
    if media in ("", "application/octet-stream"):
        raise BadRequest(
            "say the file's format: format=jsonl|csv|parquet, or its content type",
            code=ErrorCode.FORMAT_UNKNOWN,
        )
    raise AisleError(
        f"content type '{media[:100]}' is not a catalog file: use application/x-ndjson, text/csv or "
        "application/vnd.apache.parquet",
        code=ErrorCode.UNSUPPORTED_MEDIA_TYPE,
    )


@router.post(
    "/catalog/import",
    response_model=ImportAnswer,
    dependencies=[write],
    responses=error_responses(400, 401, 403, 404, 413, 415, 422, 503),
    summary="Import a catalog file (NDJSON, CSV or Parquet) as one write",
    openapi_extra={"requestBody": IMPORT_BODY},
)
async def import_catalog(
    request: Request,
    writer: Writer,
    tenant: TenantQuery,
    reconciliation: Annotated[
        Literal["incremental", "full"], Query(description="full also deletes every product the file lacks.")
    ] = "incremental",
    format: Annotated[
        Literal["jsonl", "csv", "parquet"] | None, Query(description="Default: from the content type.")
    ] = None,
    update_time: UpdateTime = None,
) -> ImportAnswer:
    """The file's rows mapped by the tenant's attributes as ``aisle catalog import`` maps them (its
    source columns), each an upsert, in one change-log entry; gzipped bodies are read too. Bad rows are
    skipped and reported by line (the first 100). 400 when no row is valid."""
    fmt = _format(request, format)
    data = await request.body()
    outcome = await run_in_threadpool(
        writer.import_data, tenant, data, fmt, reconciliation=reconciliation, update_time=update_time
    )
    return ImportAnswer.of(outcome)
