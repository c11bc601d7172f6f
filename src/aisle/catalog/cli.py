"""``aisle tenant ...``, ``aisle catalog import`` and ``aisle demo``."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import typer

from aisle.core.errors import AisleError

tenant_app = typer.Typer(help="Tenants in object storage.", no_args_is_help=True)
catalog_app = typer.Typer(help="Product catalogs.", no_args_is_help=True)


def _fail(exc: AisleError) -> None:
    typer.secho(f"error [{exc.code}]: {exc.message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(2)


class ProgressLine:
    """A one-line progress display on stderr: ``index  30000/44441  67%``."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.start = time.perf_counter()

    def __call__(self, stage: str, done: int, total: int) -> None:
        pct = f"{100 * done // total:3d}%" if total else ""
        end = "\n" if done >= total else ""
        sys.stderr.write(
            f"\r{self.label}: {stage:<6} {done:>8}/{total:<8} {pct} "
            f"{time.perf_counter() - self.start:6.1f}s{end}"
        )
        sys.stderr.flush()


def _settings_and_tenants():  # type: ignore[no-untyped-def]
    from aisle.core.config import load_settings
    from aisle.core.storage.resolver import open_blob_store_from_settings
    from aisle.core.tenancy import Tenants

    settings = load_settings()
    return settings, Tenants(open_blob_store_from_settings(settings), ttl=0)


@tenant_app.command("list")
def tenant_list() -> None:
    """List the tenants found in storage."""
    _, tenants = _settings_and_tenants()
    for name in tenants.names():
        typer.echo(name)


@tenant_app.command("validate")
def tenant_validate(tenant: str) -> None:
    """Load and validate the tenant's five configuration files."""
    _, tenants = _settings_and_tenants()
    try:
        tenants.config(tenant)
    except AisleError as exc:
        _fail(exc)
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

    settings, tenants = _settings_and_tenants()
    progress = ProgressLine(tenant)
    try:
        report, _ = import_catalog(tenants, tenant, file, fmt=fmt, progress=progress)
        if index:
            IndexRegistry(tenants, settings.data_dir).get(tenant, progress=progress)
    except AisleError as exc:
        _fail(exc)
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
