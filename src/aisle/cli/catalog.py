"""``aisle tenant list|validate`` and ``aisle catalog import``."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from aisle.cli.common import fail, settings_and_tenants
from aisle.core.errors import AisleError
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
    index: bool = typer.Option(True, help="Build the search index right away."),
    show_bad: int = typer.Option(20, help="How many bad rows to list."),
) -> None:
    """Import FILE (JSONL, CSV or Parquet, optionally .gz) as TENANT's new catalog version."""
    from aisle.catalog.importer import import_catalog
    from aisle.search.indexes import IndexRegistry

    settings, tenants = settings_and_tenants()
    progress = ProgressLine(tenant)
    try:
        report, _ = import_catalog(tenants, tenant, file, fmt=fmt, progress=progress)
        if index:
            IndexRegistry(tenants, settings.data_dir).get(tenant, progress=progress)
    except AisleError as exc:
        fail(exc)
    for bad in report.bad_rows[:show_bad]:
        typer.secho(f"  skipped line {bad.line}: {bad.reason}", fg=typer.colors.YELLOW, err=True)
    if len(report.bad_rows) > show_bad:
        typer.secho(
            f"  ... and {len(report.bad_rows) - show_bad} more bad rows", fg=typer.colors.YELLOW, err=True
        )
    typer.echo(
        f"{tenant}: imported {report.imported} products as version {report.version}"
        f" ({len(report.bad_rows)} bad rows skipped) in {time.perf_counter() - progress.start:.1f}s"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(tenant_app, name="tenant")
    app.add_typer(catalog_app, name="catalog")
