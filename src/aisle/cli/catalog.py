"""``aisle tenant list|validate`` and ``aisle catalog import|compact``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from aisle.catalog.readers import BadRow
    from aisle.catalog.writer import Reconciliation
    from aisle.core.config import Settings
    from aisle.core.tenancy import Tenants

from aisle.cli.common import fail, settings_and_tenants
from aisle.core.errors import AisleError, ErrorCode
from aisle.core.progress import ProgressLine

tenant_app = typer.Typer(help="Tenants in object storage.", no_args_is_help=True)
catalog_app = typer.Typer(help="Product catalogs.", no_args_is_help=True)


@tenant_app.command("list")
def tenant_list() -> None:
    """List the tenants found in storage."""
    _, tenants = settings_and_tenants()
    for name in tenants.names():
        typer.echo(name)


@tenant_app.command("validate")
def tenant_validate(tenant: str) -> None:
    """Load and validate the tenant's five configuration files."""
    _, tenants = settings_and_tenants()
    try:
        tenants.config(tenant)
    except AisleError as exc:
        fail(exc)
    typer.echo(f"{tenant}: configuration valid")


@catalog_app.command("import")
def catalog_import(
    tenant: str,
    file: Path,
    fmt: str = typer.Option(None, "--format", help="jsonl, csv or parquet (default: from the file name)"),
    reconciliation: str = typer.Option(
        "full", help="full: the file is the whole catalog (products it lacks are deleted); incremental."
    ),
    index: bool = typer.Option(True, help="Build the search index right away."),
    show_bad: int = typer.Option(20, help="How many bad rows to list."),
) -> None:
    """Import FILE (JSONL, CSV or Parquet, optionally .gz) into TENANT's catalog, as POST /catalog/import
    does (one change-log write), then fold it into a new catalog version."""
    from aisle.catalog.writer import CatalogWriter

    if reconciliation not in ("full", "incremental"):
        fail(f"--reconciliation must be full or incremental, not '{reconciliation}'")
    settings, tenants = settings_and_tenants()
    progress = ProgressLine(tenant)
    try:
        mode: Reconciliation = "full" if reconciliation == "full" else "incremental"
        report = CatalogWriter(tenants).import_file(tenant, file, fmt, reconciliation=mode, progress=progress)
    except AisleError as exc:
        fail(exc)
    _print_bad_rows(report.bad_rows, show_bad)
    typer.echo(
        f"{tenant}: imported {report.applied} products ({report.deleted} deleted, {report.stale} stale, "
        f"{len(report.bad_rows)} bad rows skipped) as change {report.sequence}"
    )
    _compact_and_index(settings, tenants, tenant, index, progress)


def _print_bad_rows(bad_rows: list[BadRow], show: int) -> None:
    for bad in bad_rows[:show]:
        typer.secho(f"  skipped line {bad.line}: {bad.reason}", fg=typer.colors.YELLOW, err=True)
    if len(bad_rows) > show:
        typer.secho(f"  ... and {len(bad_rows) - show} more bad rows", fg=typer.colors.YELLOW, err=True)


def _compact_and_index(
    settings: Settings, tenants: Tenants, tenant: str, index: bool, progress: ProgressLine
) -> None:
    """Fold the change log into a new catalog version (and index it); a search service compacting the
    tenant meanwhile does it instead."""
    from aisle.catalog.compaction import compact
    from aisle.search.indexes import IndexRegistry

    try:
        folded = compact(tenants, tenant)
    except AisleError as exc:
        if exc.code != ErrorCode.CATALOG_COMPACTING:
            fail(exc)
        typer.echo(f"{tenant}: a search service is compacting the catalog; it serves the import next")
        return
    if folded is not None:
        typer.echo(f"{tenant}: catalog version {folded.version} ({folded.products} products)")
    try:
        if index:
            IndexRegistry(tenants, settings.data_dir).get(tenant, progress=progress)
    except AisleError as exc:
        fail(exc)
    typer.echo(f"{tenant}: done in {time.perf_counter() - progress.start:.1f}s")


@catalog_app.command("compact")
def catalog_compact(tenant: str) -> None:
    """Fold TENANT's catalog change log (product API writes) into a new catalog version now."""
    from aisle.catalog.compaction import compact

    _, tenants = settings_and_tenants()
    try:
        folded = compact(tenants, tenant)
    except AisleError as exc:
        fail(exc)
    if folded is None:
        typer.echo(f"{tenant}: nothing to compact")
    else:
        typer.echo(
            f"{tenant}: changes up to {folded.sequence} folded into catalog version {folded.version} "
            f"({folded.products} products)"
        )


def register(app: typer.Typer) -> None:
    app.add_typer(tenant_app, name="tenant")
    app.add_typer(catalog_app, name="catalog")
