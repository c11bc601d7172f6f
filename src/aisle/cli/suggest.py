"""``aisle suggest import-log TENANT FILE`` and ``aisle suggest query TENANT TEXT``."""

from __future__ import annotations

from pathlib import Path

import typer


def import_log_cmd(
    tenant: str = typer.Argument(..., help="Tenant whose query log this is, e.g. homedepot."),
    file: Path = typer.Argument(
        ..., exists=True, dir_okay=False, help="One query per line, or a .csv of query,count."
    ),
    append: bool = typer.Option(False, "--append", help="Add to the stored log instead of replacing it."),
) -> None:
    """Store a search query log for the tenant's autocomplete (counts of the same query added up)."""
    from aisle.core.config import load_settings
    from aisle.core.errors import AisleError
    from aisle.core.storage.resolver import open_blob_store_from_settings
    from aisle.core.tenancy import Tenants
    from aisle.search.querylog import LOG_DATA, import_query_log_file

    tenants = Tenants(open_blob_store_from_settings(load_settings()))
    typer.echo(f"reading {file} ...")
    try:
        summary = import_query_log_file(tenants, tenant, file, append=append)
    except AisleError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(
        f"{tenant}: {summary.queries} distinct queries ({summary.searches} searches) from {summary.lines} "
        f"lines ({summary.skipped} skipped) stored in {tenant}/{LOG_DATA}"
        + (" (added to the previous log)" if append else "")
    )


def query_cmd(
    tenant: str = typer.Argument(..., help="Tenant, e.g. fashion."),
    text: str = typer.Argument(..., help="What a shopper has typed, e.g. 'nik'."),
    limit: int = typer.Option(None, min=1, max=50),
) -> None:
    """Print the suggestions for TEXT, computed in-process (builds the suggestion index if needed)."""
    from aisle.core.config import load_settings
    from aisle.core.storage.resolver import open_blob_store_from_settings
    from aisle.core.tenancy import Tenants
    from aisle.search.indexes import IndexRegistry
    from aisle.search.suggest.registry import SuggesterRegistry

    settings = load_settings()
    tenants = Tenants(open_blob_store_from_settings(settings))
    registry = SuggesterRegistry(tenants, IndexRegistry(tenants, settings.data_dir))
    for s in registry.get(tenant).suggest(text, limit):
        typer.echo(f"{s.type:9} {s.suggestion}")


def register(app: typer.Typer) -> None:
    """Add the ``suggest`` command group to ``app``."""
    suggest_app = typer.Typer(help="Autocomplete suggestions (GET /suggestions).", no_args_is_help=True)
    suggest_app.command("import-log")(import_log_cmd)
    suggest_app.command("query")(query_cmd)
    app.add_typer(suggest_app, name="suggest")
