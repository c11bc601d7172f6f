"""A new tenant from one catalog file: the front door of `aisle tenant create` and `PUT /tenants/{tenant}`.

:func:`create_tenant` reads the file (CSV, NDJSON or Parquet, optionally gzipped), infers the attribute
configuration (:mod:`aisle.catalog.inference`), maps the rows onto it as an import does
(:func:`aisle.catalog.schema.map_catalog`: bad rows reported with their lines and skipped), and only
then writes: the catalog version first, then the five configuration files with the marker
(``attribute_configuration.json``) last (:meth:`Tenants.write_config`). A tenant exists when its marker
does, so an unreadable file, one without an id column or one without a valid row writes nothing, and a
failure half-way (storage down) leaves no tenant behind, only an unlisted catalog a retry replaces.

It does not go through :func:`aisle.catalog.importer.import_catalog`, which reads a path and needs
the tenant's configuration in storage before it reads the file: the configuration would then be
written before the file is known to parse.

Replacing a tenant (``replace``) writes its new catalog as a whole version that includes the change
log so far (as :func:`~aisle.catalog.importer.import_catalog` does), then its new configuration: for up to the
services' configuration cache (2 s) a replica may serve the new catalog under the old configuration.
The tenant's rules, rankers, vectors and models stay; those naming attributes the new configuration
lacks stop applying.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field

import polars as pl
from pydantic import BaseModel

from aisle.catalog.changes import ChangeLog
from aisle.catalog.inference import Inference, infer_attributes
from aisle.catalog.readers import BadRow, read_catalog_bytes
from aisle.catalog.schema import map_catalog
from aisle.catalog.store import CatalogStore
from aisle.core.errors import AisleError, BadRequest, Conflict, ErrorCode
from aisle.core.tenancy import Tenants, check_tenant_name
from aisle.core.tenant_config import (
    AutocompleteConfiguration,
    CrsConfig,
    GlobalConfiguration,
    UserGroupConfiguration,
)

MEDIA_TYPES: dict[str, str] = {
    "text/csv": "csv",
    "application/x-ndjson": "jsonl",
    "application/jsonl": "jsonl",
    "application/json-lines": "jsonl",
    "application/vnd.apache.parquet": "parquet",
    "application/x-parquet": "parquet",
}
"""The request body's content type -> the catalog format (``PUT /tenants/{tenant}``)."""
GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class TenantCreation:
    """What :func:`create_tenant` did: the inference, the products imported (or that would be, on a dry
    run), the rows skipped, and the catalog ``version`` written (None on a dry run)."""

    tenant: str
    inference: Inference
    imported: int
    bad_rows: list[BadRow] = field(default_factory=list)
    version: str | None = None
    replaced: bool = False
    dry_run: bool = False


def catalog_format(media_type: str | None) -> str:
    """The catalog format of a request body's ``Content-Type`` (parameters such as ``charset`` ignored).

    Raises:
        AisleError (415 ``unsupported_media_type``): none of :data:`MEDIA_TYPES`.
    """
    essence = (media_type or "").split(";", 1)[0].strip().lower()
    fmt = MEDIA_TYPES.get(essence)
    if fmt is None:
        raise AisleError(
            f"a catalog body must be one of {', '.join(MEDIA_TYPES)} (got '{essence or 'none'}')",
            code=ErrorCode.UNSUPPORTED_MEDIA_TYPE,
        )
    return fmt


def read_catalog(data: bytes, fmt: str) -> tuple[pl.DataFrame, list[BadRow]]:
    """:func:`aisle.catalog.readers.read_catalog_bytes`, refusing an empty body and a file polars cannot
    give a text form (a Parquet list column) with a code rather than an unexpected error.

    Raises:
        BadRequest: ``catalog_empty`` (no byte), ``catalog_file_invalid`` (corrupt gzip, CSV or Parquet,
            or Parquet with nested columns), ``format_unknown``.
    """
    unpacked = data
    if data[:2] == GZIP_MAGIC:
        try:
            unpacked = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise BadRequest(
                f"the gzip stream is corrupt: {exc}", code=ErrorCode.CATALOG_FILE_INVALID
            ) from exc
    if not unpacked.strip():
        raise BadRequest("the catalog file is empty", code=ErrorCode.CATALOG_EMPTY)
    try:
        return read_catalog_bytes(unpacked, fmt)
    except pl.exceptions.PolarsError as exc:  # e.g. a Parquet list column, which has no text form
        raise BadRequest(
            f"the catalog file cannot be read as {fmt}: {exc}", code=ErrorCode.CATALOG_FILE_INVALID
        ) from exc


def tenant_files(tenant: str, inference: Inference) -> dict[str, BaseModel]:
    """The five configuration files of a new tenant: the inferred attributes, default autocomplete,
    no external search, no user groups, and global settings naming the tenant (and the currency of a
    ``currency`` column, else USD)."""
    global_ = GlobalConfiguration(display_name=tenant, currency=inference.currency or "USD")
    return {
        "attribute_configuration.json": inference.configuration,
        "autocomplete_configuration.json": AutocompleteConfiguration(),
        "crs_config.json": CrsConfig(),
        "global_configuration.json": global_,
        "user_group_configuration.json": UserGroupConfiguration(),
    }


def create_tenant(
    tenants: Tenants,
    tenant: str,
    data: bytes,
    fmt: str,
    *,
    source: str | None = None,
    replace: bool = False,
    dry_run: bool = False,
    id_column: str | None = None,
    title_column: str | None = None,
) -> TenantCreation:
    """Create (or with ``replace``, replace) ``tenant`` from a catalog file's bytes in format ``fmt``.

    ``dry_run`` infers and maps without writing anything (and without minding an existing tenant).
    ``source`` names the file in the catalog version's pointer.

    Raises:
        BadRequest (400): ``tenant_invalid``, ``catalog_empty`` (no row, or no valid one),
            ``catalog_file_invalid``, ``catalog_id_missing``, ``catalog_title_missing``, ``format_unknown``.
        Conflict (409 ``tenant_exists``): the tenant exists and ``replace`` is false.
        StorageUnavailable (503): object storage failed (nothing is a tenant until the last write).
    """
    check_tenant_name(tenant)
    existed = tenants.exists(tenant)
    if existed and not replace and not dry_run:
        raise Conflict(
            f"tenant '{tenant}' exists already: replace it with --replace (replace=true)",
            code=ErrorCode.TENANT_EXISTS,
            details={"tenant": tenant},
        )
    raw, bad = read_catalog(data, fmt)
    inference = infer_attributes(raw, id_column=id_column, title_column=title_column)
    files = tenant_files(tenant, inference)
    products, rejected = map_catalog(raw, inference.configuration)
    bad = sorted(bad + rejected, key=lambda b: b.line)
    if products.height == 0:
        first = f"line {bad[0].line}: {bad[0].reason}" if bad else "the file holds no row"
        raise BadRequest(
            f"no valid product in the catalog file ({len(bad)} bad rows; first: {first})",
            code=ErrorCode.CATALOG_EMPTY,
        )
    if dry_run:
        return TenantCreation(tenant, inference, products.height, bad, replaced=existed, dry_run=True)
    scope = tenants.scope(tenant)
    head = ChangeLog(scope).head()  # on a replace, the product writes this whole version replaces
    catalog = CatalogStore(scope).write(products, source=source, sequence=head)
    tenants.write_config(tenant, files)
    return TenantCreation(tenant, inference, products.height, bad, version=catalog.version, replaced=existed)
