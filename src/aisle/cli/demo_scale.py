"""``aisle demo scale``: a synthetic catalog of N products and its query mix, imported as a tenant
(:mod:`aisle.demo.scale`; issue 42). Not part of ``make run``."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from aisle.cli.common import fail, settings_and_tenants
from aisle.core.errors import AisleError


def scale(
    tenant: str = typer.Option("scale", help="The tenant to create (replaced if it exists)."),
    products: int = typer.Option(100_000, "--products", min=1, help="How many products."),
    seed: int = typer.Option(42, min=0, help="Same products and seed: byte-identical files."),
    queries: int = typer.Option(1000, min=0, help="Queries in the mix (queries.txt)."),
    data_dir: Path = typer.Option(Path("../shared/data"), help="The shared data folder (the demo catalogs)."),
    out: Path = typer.Option(
        None, help="Where catalog.parquet and queries.txt go (default: AISLE_DATA_DIR/scale/<tenant>)."
    ),
    do_import: bool = typer.Option(
        True, "--import/--no-import", help="Import and index the catalog as TENANT; --no-import: files only."
    ),
) -> None:
    """Write a synthetic catalog built from the demo catalogs' vocabulary (brands, types, colours, sizes,
    title shapes, prices, categories; availability) and a query mix, then import it as TENANT."""
    from aisle.core.config import load_settings
    from aisle.demo.scale import EtaLine, write_scale_catalog
    from aisle.demo.scale_source import load_source

    settings = load_settings()  # the bucket is opened only to import (--no-import touches none)
    if not data_dir.exists():
        fail(f"shared data not found at {data_dir}: the generator recombines the demo catalogs")
    target = out if out is not None else settings.data_dir / "scale" / tenant
    progress = EtaLine(tenant)
    try:
        files = write_scale_catalog(
            load_source(data_dir.resolve()), target, products, seed=seed, queries=queries, progress=progress
        )
    except AisleError as exc:
        fail(exc)
    typer.echo(
        f"{tenant}: {files.products} products in {files.catalog}, {files.query_count} queries in "
        f"{files.queries}, {time.perf_counter() - progress.start:.1f}s"
    )
    if do_import:
        _import(tenant, files.catalog)


def _import(tenant: str, catalog: Path) -> None:
    """The tenant's files, its catalog version and search index, timed."""
    from aisle.demo.scale import EtaLine, import_scale

    settings, tenants = settings_and_tenants()
    progress = EtaLine(tenant)
    try:
        imported = import_scale(tenants, tenant, catalog, settings.data_dir, progress=progress)
    except AisleError as exc:
        fail(exc)
    typer.echo(
        f"{tenant}: imported and indexed {imported} products, {time.perf_counter() - progress.start:.1f}s"
    )
