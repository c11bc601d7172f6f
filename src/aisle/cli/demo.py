"""``aisle demo``: build the demo tenants (see :mod:`aisle.demo`)."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from aisle.cli.common import fail
from aisle.core.errors import AisleError


def demo(
    data_dir: Path = typer.Option(Path("../shared/data"), help="The shared data folder."),
    if_missing: bool = typer.Option(False, "--if-missing", help="Keep tenants that already exist."),
    only: list[str] = typer.Option([], "--only", help="Create only these demo tenants' catalogs."),
    recs: bool = typer.Option(True, help="Train and deploy the demo recommendation models."),
    vectors: bool = typer.Option(True, help="Build the embeddings for vector search."),
    images: bool = typer.Option(True, help="Also embed the fashion photos (needs the 'image' extra)."),
    ranker: bool = typer.Option(True, help="Train the Home Depot search ranker on its dev judgments."),
) -> None:
    """Create the demo tenants with catalogs, indexes, query log, models, containers, embeddings and
    the search ranker."""
    from aisle.core.config import load_settings
    from aisle.core.storage.resolver import open_blob_store_from_settings
    from aisle.demo import build_demo

    settings = load_settings()
    store = open_blob_store_from_settings(settings)
    data = data_dir.resolve() if data_dir.exists() else None
    if data is None:
        typer.secho(
            f"shared data not found at {data_dir}: only the 'default' tenant can be created", fg="yellow"
        )
    start = time.perf_counter()
    try:
        build_demo(
            settings,
            store,
            data,
            only=only,
            if_missing=if_missing,
            recs=recs,
            vectors=vectors,
            images=images,
            ranker=ranker,
        )
    except AisleError as exc:
        fail(exc)
    typer.echo(f"demo ready in {time.perf_counter() - start:.0f}s")


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
