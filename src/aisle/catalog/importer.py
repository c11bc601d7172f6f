"""Catalog import: read a file, map it onto the tenant's attributes, write a new catalog version.

Bad rows are reported with their line numbers and skipped; the import writes a complete new
version and only then switches the tenant to it, so a failed import changes nothing.

:func:`import_catalog` writes the version directly, replacing the catalog and every change-log entry
before it (the demo builds and tests use it, offline). ``aisle catalog import`` and
``POST /catalog/import`` go through the change log instead (:meth:`aisle.catalog.writer.CatalogWriter.
import_data`), so an import is ordered with the product API's writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from aisle.catalog.changes import ChangeLog
from aisle.catalog.readers import BadRow, Progress, read_catalog_file
from aisle.catalog.schema import map_catalog
from aisle.catalog.store import Catalog, CatalogStore
from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.tenancy import Tenants


@dataclass
class ImportReport:
    """Outcome of one import: the new version, how many products, and the rows skipped."""

    tenant: str
    version: str
    imported: int
    bad_rows: list[BadRow] = field(default_factory=list)


def import_catalog(
    tenants: Tenants,
    tenant: str,
    path: Path,
    *,
    fmt: str | None = None,
    progress: Progress | None = None,
) -> tuple[ImportReport, Catalog]:
    """Import ``path`` (JSONL, CSV or Parquet, optionally .gz) as the tenant's new catalog.

    Raises:
        TenantNotFound: unknown tenant.
        ConfigInvalid: the tenant's attribute configuration is invalid.
        BadRequest: unreadable file, missing id column, or no valid row at all.
    """
    config = tenants.config(tenant)
    raw, bad = read_catalog_file(path, fmt, progress)
    if progress:
        progress("map", 0, raw.height)
    products, rejected = map_catalog(raw, config.attributes)
    bad = sorted(bad + rejected, key=lambda b: b.line)
    if products.height == 0:
        raise BadRequest(
            f"no valid product in '{path.name}' ({len(bad)} bad rows; first: "
            + (f"line {bad[0].line}: {bad[0].reason})" if bad else "the file is empty)"),
            code=ErrorCode.CATALOG_EMPTY,
        )
    if progress:
        progress("write", products.height, products.height)
    scope = tenants.scope(tenant)
    head = ChangeLog(scope).head()  # the writes this whole version replaces (aisle.catalog.changes)
    catalog = CatalogStore(scope).write(products, source=path.name, sequence=head)
    return ImportReport(tenant, catalog.version, products.height, bad), catalog
