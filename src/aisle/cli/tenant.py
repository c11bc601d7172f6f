"""``aisle tenant create NAME --catalog FILE``: a new tenant from one catalog file, its configuration
inferred (:mod:`aisle.catalog.onboarding`), its search index built, what was inferred printed."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from aisle.cli.common import fail, settings_and_tenants
from aisle.core.errors import AisleError, ErrorCode

if TYPE_CHECKING:
    from aisle.catalog.onboarding import TenantCreation

HEADERS = ("column", "attribute", "type", "role", "search", "filter", "facet", "sort", "why")


def tenant_create(
    name: str = typer.Argument(..., help="The new tenant (1-64 of a-z, 0-9, '-', '_')."),
    catalog: Path = typer.Option(..., "--catalog", help="CSV, NDJSON/JSONL or Parquet, optionally .gz."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print what would be inferred; write nothing."),
    replace: bool = typer.Option(False, "--replace", help="Replace the tenant if it exists."),
    id_column: str = typer.Option(None, "--id-column", help="The product id column (default: inferred)."),
    title_column: str = typer.Option(None, "--title-column", help="The title column (default: inferred)."),
    show_bad: int = typer.Option(20, help="How many bad rows to list."),
) -> None:
    """Create tenant NAME from FILE: infer its attributes, write its five files, import, index."""
    from aisle.catalog.onboarding import create_tenant
    from aisle.catalog.readers import detect_format
    from aisle.core.progress import ProgressLine
    from aisle.search.indexes import IndexRegistry

    settings, tenants = settings_and_tenants()
    started = time.perf_counter()
    try:
        if not catalog.is_file():
            raise AisleError(f"catalog file '{catalog}' does not exist", code=ErrorCode.CATALOG_FILE_MISSING)
        created = create_tenant(
            tenants,
            name,
            catalog.read_bytes(),
            detect_format(catalog),
            source=catalog.name,
            replace=replace,
            dry_run=dry_run,
            id_column=id_column,
            title_column=title_column,
        )
        print_inference(created)
        print_bad_rows(created, show_bad)
        if not dry_run:
            IndexRegistry(tenants, settings.data_dir).get(name, progress=ProgressLine(name))
    except AisleError as exc:
        fail(exc)
    typer.echo(summary(created, time.perf_counter() - started))


def table(created: TenantCreation) -> list[tuple[str, ...]]:
    """The inference as rows of :data:`HEADERS` (``yes`` or empty for the flags)."""

    def flag(value: bool) -> str:
        return "yes" if value else ""

    rows: list[tuple[str, ...]] = []
    for column in created.inference.columns:
        a = column.attribute
        if a is None:
            rows.append((column.column, "(id)", "", "id", "", "", "", "", column.why))
            continue
        search = f"x{a.weight:g}" if a.searchable else ""
        role = a.role.value if a.role is not None else ""
        flags = (flag(a.filterable), flag(a.facetable), flag(a.sortable))
        rows.append((column.column, a.name, a.type.value, role, search, *flags, column.why))
    return rows


def print_inference(created: TenantCreation) -> None:
    """The inference as an aligned table on stdout."""
    rows = [HEADERS, *table(created)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADERS) - 1)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        typer.echo("  ".join([*cells, row[-1]]).rstrip())


def print_bad_rows(created: TenantCreation, show: int) -> None:
    for bad in created.bad_rows[:show]:
        typer.secho(f"  skipped line {bad.line}: {bad.reason}", fg=typer.colors.YELLOW, err=True)
    if len(created.bad_rows) > show:
        more = len(created.bad_rows) - show
        typer.secho(f"  ... and {more} more bad rows", fg=typer.colors.YELLOW, err=True)


def summary(created: TenantCreation, seconds: float) -> str:
    """The closing line: what was (or, on a dry run, would be) imported, and what comes next."""
    skipped = f"{len(created.bad_rows)} bad rows skipped"
    if created.dry_run:
        verb = "would replace" if created.replaced else "would create"
        imported = f"{created.imported} products ({skipped})"
        return f"{created.tenant}: dry run, nothing written; {verb} it with {imported}"
    verb = "replaced" if created.replaced else "created"
    return (
        f"{created.tenant}: {verb}, {created.imported} products imported as version {created.version} "
        f"({skipped}) and indexed in {seconds:.1f}s; it searches now. Hybrid and semantic search need "
        f"its text vectors: aisle vectors build {created.tenant}"
    )


def register(app: typer.Typer) -> None:
    """Add ``create`` to the ``tenant`` command group (made by :mod:`aisle.cli.catalog`, else here)."""
    group = next((g.typer_instance for g in app.registered_groups if g.name == "tenant"), None)
    if group is None:
        group = typer.Typer(help="Tenants in object storage.", no_args_is_help=True)
        app.add_typer(group, name="tenant")
    group.command("create")(tenant_create)
