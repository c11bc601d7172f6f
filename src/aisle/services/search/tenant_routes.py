"""``PUT /tenants/{tenant}`` on the search service: a new tenant from one catalog file (scope ``admin``).

The body is the catalog file itself, its format named by ``Content-Type`` (``text/csv``,
``application/x-ndjson``, ``application/vnd.apache.parquet``; gzipped or not), at most
``AISLE_MAX_BULK_BYTES`` (32 MiB; 413 ``payload_too_large`` past it). The attribute configuration is
inferred from the columns, the five files are written and the catalog imported
(:func:`aisle.catalog.onboarding.create_tenant`); the answer lists each column's attribute and why,
and the import's count and bad rows. The tenant searches at once: ``POST /search`` builds its index
on first use. Text vectors (hybrid search, ``/vector-search``) are not built here:
``aisle vectors build <tenant>``.

The token needs scope ``admin`` and must name the tenant (a client registered with
``--tenants <tenant>``), so one tenant's administrator can never replace another's.
"""

from __future__ import annotations

from typing import Annotated

import orjson
from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from aisle.catalog.onboarding import MEDIA_TYPES, TenantCreation, catalog_format, create_tenant
from aisle.core.auth.errors import TenantForbidden
from aisle.core.auth.scopes import ADMIN
from aisle.core.auth.tokens import Principal
from aisle.services.common.auth import require_scope
from aisle.services.common.errors import error_responses
from aisle.services.common.params import TENANT_PATTERN
from aisle.services.search.state import State

router = APIRouter()
BAD_ROWS_SHOWN = 100
TenantPath = Annotated[
    str,
    Path(
        pattern=TENANT_PATTERN,
        description="The tenant to create (1-64 of a-z, 0-9, '-', '_').",
        examples=["wines"],
    ),
]
ColumnQuery = Annotated[str | None, Query(min_length=1, max_length=256)]


class InferredAttribute(BaseModel):
    """One column of the file and what it became (``name`` null: the product id)."""

    model_config = ConfigDict(populate_by_name=True)

    column: str
    name: str | None = None
    type: str | None = None
    role: str | None = None
    searchable: bool = False
    weight: float | None = None
    filterable: bool = False
    facetable: bool = False
    sortable: bool = False
    why: str


class BadRowOut(BaseModel):
    line: int
    reason: str


class TenantCreated(BaseModel):
    """The answer of ``PUT /tenants/{tenant}``: the inferred attributes and the import's outcome."""

    model_config = ConfigDict(populate_by_name=True)

    tenant: str
    dry_run: bool = Field(alias="dryRun", description="Nothing was written.")
    replaced: bool = Field(description="The tenant existed (on a dry run: would be replaced).")
    version: str | None = Field(description="The catalog version written; null on a dry run.")
    id_column: str = Field(alias="idColumn")
    currency: str
    attributes: list[InferredAttribute]
    imported: int = Field(description="Products imported (on a dry run: that would be).")
    bad_row_count: int = Field(alias="badRowCount")
    bad_rows: list[BadRowOut] = Field(
        alias="badRows", description=f"The first {BAD_ROWS_SHOWN} rows skipped."
    )


async def _administers(
    tenant: TenantPath, principal: Annotated[Principal | None, Depends(require_scope(ADMIN))]
) -> None:
    """The token (scope ``admin``) must name the path's tenant; with auth off there is no token."""
    if principal is not None and tenant not in principal.tenants:
        raise TenantForbidden(tenant)


DOCUMENTED = {  # the canonical type of each format (as POST /catalog/import documents them)
    "text/csv": {"schema": {"type": "string"}},
    "application/x-ndjson": {"schema": {"type": "string"}},
    "application/vnd.apache.parquet": {"schema": {"type": "string", "format": "binary"}},
}
BODY_DOC = {
    "required": True,
    "description": "The catalog file: a header row and one product per row (CSV), one JSON object per "
    "line (NDJSON) or a Parquet file; gzip allowed. Needs an id column (id, sku, product_id, *_id... or "
    "idColumn) and a text column for the title. Also accepted: "
    + ", ".join(sorted(set(MEDIA_TYPES) - set(DOCUMENTED)))
    + ".",
    "content": DOCUMENTED,
}


@router.put(
    "/tenants/{tenant}",
    response_model=TenantCreated,
    dependencies=[Depends(_administers)],
    responses=error_responses(400, 401, 403, 409, 415, 422, 503),
    summary="Create a tenant from a catalog file",
    openapi_extra={"requestBody": BODY_DOC},
)
async def put_tenant(
    state: State,
    request: Request,
    tenant: TenantPath,
    dry_run: Annotated[bool, Query(alias="dryRun", description="Infer and report; write nothing.")] = False,
    replace: Annotated[
        bool, Query(description="Replace an existing tenant (else 409 tenant_exists).")
    ] = False,
    id_column: Annotated[ColumnQuery, Query(alias="idColumn", description="The product id column.")] = None,
    title_column: Annotated[ColumnQuery, Query(alias="titleColumn", description="The title column.")] = None,
) -> Response:
    """Infer the tenant's attribute configuration from the file's columns, write its five configuration
    files, import the catalog. Errors: 409 ``tenant_exists`` (without ``replace``); 400
    ``catalog_file_invalid``, ``catalog_id_missing``, ``catalog_title_missing``, ``catalog_empty``; 415
    for another content type; 413 over the size limit. Nothing is written unless the whole file parsed
    and mapped (bad rows aside)."""
    fmt = catalog_format(request.headers.get("content-type"))
    data = await request.body()
    created = await run_in_threadpool(
        create_tenant,
        state.engine.tenants,
        tenant,
        data,
        fmt,
        source=f"PUT /tenants/{tenant}",
        replace=replace,
        dry_run=dry_run,
        id_column=id_column,
        title_column=title_column,
    )
    return Response(orjson.dumps(answer(created).model_dump(by_alias=True)), media_type="application/json")


def answer(created: TenantCreation) -> TenantCreated:
    """The JSON shape of a :class:`TenantCreation`."""
    attributes = []
    for column in created.inference.columns:
        a = column.attribute
        if a is None:
            attributes.append(InferredAttribute(column=column.column, why=column.why))
            continue
        attributes.append(
            InferredAttribute(
                column=column.column,
                name=a.name,
                type=a.type.value,
                role=a.role.value if a.role is not None else None,
                searchable=a.searchable,
                weight=a.weight if a.searchable else None,
                filterable=a.filterable,
                facetable=a.facetable,
                sortable=a.sortable,
                why=column.why,
            )
        )
    return TenantCreated(
        tenant=created.tenant,
        dryRun=created.dry_run,
        replaced=created.replaced,
        version=created.version,
        idColumn=created.inference.configuration.id_source,
        currency=created.inference.currency or "USD",
        attributes=attributes,
        imported=created.imported,
        badRowCount=len(created.bad_rows),
        badRows=[BadRowOut(line=b.line, reason=b.reason) for b in created.bad_rows[:BAD_ROWS_SHOWN]],
    )
