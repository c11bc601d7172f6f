"""``aisle demo``: everything ``make run`` needs, built once and reused.

Steps, each idempotent (a second run costs seconds): the demo tenants' configuration, catalogs and
full-text indexes (fashion, homedepot, default, yoochoose); the Home Depot query log for
autocomplete; the product embeddings for vector and image search; the demo recommendation models
(trained on the training part of each protocol only; SIMILAR_ITEMS reuses the text embeddings)
deployed into the demo containers; and the Home Depot search ranker.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from aisle.core.cli import ProgressLine, fail
from aisle.core.errors import AisleError

if TYPE_CHECKING:
    from aisle.core.tenancy import Tenants


def import_demo_catalogs(
    tenants: Tenants,
    index_dir: Path,
    data: Path | None,
    *,
    only: Collection[str] = (),
    if_missing: bool = False,
    echo: Callable[[str], None] = typer.echo,
) -> list[str]:
    """Create the demo tenants (configuration, catalog, search index under ``index_dir``) from ``data``.

    ``only`` limits the tenants; ``if_missing`` keeps a tenant whose catalog and index already exist.
    A data set missing from ``data`` is skipped with a message. Returns the tenants ready afterwards.
    Shared by ``aisle demo`` and the benchmarks. Raises AisleError when an import fails.
    """
    from aisle.catalog.datasets import demo_datasets
    from aisle.catalog.importer import import_catalog
    from aisle.search.indexes import IndexRegistry

    registry = IndexRegistry(tenants, index_dir)
    ready = []
    with tempfile.TemporaryDirectory(prefix="aisle-demo-") as tmp:
        for ds in demo_datasets():
            if only and ds.tenant not in only:
                continue
            if if_missing and tenants.exists(ds.tenant):
                try:
                    registry.get(ds.tenant)  # the index must exist too
                    echo(f"{ds.tenant}: catalog and index present")
                    ready.append(ds.tenant)
                    continue
                except AisleError:
                    pass
            source = ds.prepare(data, Path(tmp))
            if source is None:
                echo(f"{ds.tenant}: skipped, its data is not available")
                continue
            tenants.write_config(ds.tenant, ds.configs())
            progress = ProgressLine(ds.tenant)
            report, _ = import_catalog(tenants, ds.tenant, source, progress=progress)
            registry.get(ds.tenant, progress=progress)
            ready.append(ds.tenant)
            echo(
                f"{ds.tenant}: {ds.description}: {report.imported} products, "
                f"{len(report.bad_rows)} bad rows skipped, {time.perf_counter() - progress.start:.1f}s"
            )
    return ready


def import_demo_query_log(
    tenants: Tenants, data: Path | None, echo: Callable[[str], None] = typer.echo
) -> None:
    """Import the Home Depot dev queries as the ``homedepot`` autocomplete query log, when both exist."""
    from aisle.search.suggest.querylog import import_query_log

    log = data / "homedepot" / "queries_dev.txt" if data else None
    if log is None or not log.exists() or not tenants.exists("homedepot"):
        echo("homedepot: query log not available, autocomplete uses the catalog only")
        return
    echo(f"homedepot: query log, {import_query_log(tenants, 'homedepot', log)} distinct queries")


def _recs(settings, store, data: Path | None) -> None:  # type: ignore[no-untyped-def]
    from aisle.demo.containers import deploy_demo
    from aisle.demo.recs import train_demo_models

    records = train_demo_models(store, data, vectors_dir=settings.data_dir, progress=typer.echo)
    for container in deploy_demo(store, settings, records, progress=typer.echo):
        typer.echo(f"{container.tenant}: container '{container.container_id}' serves {container.model_id}")


def _vectors(settings, data: Path | None, images: bool) -> None:  # type: ignore[no-untyped-def]
    from aisle.vectors.demo import build_demo_vectors

    build_demo_vectors(settings, data, images=images, echo=typer.echo, progress_for=ProgressLine)


def _ranker(settings, tenants, data: Path | None) -> None:  # type: ignore[no-untyped-def]
    from aisle.search.ranking.demo import train_demo_rankers

    train_demo_rankers(tenants, settings.data_dir, data, echo=typer.echo)


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
    from aisle.core.tenancy import Tenants

    settings = load_settings()
    store = open_blob_store_from_settings(settings)
    tenants = Tenants(store, ttl=0)
    data = data_dir.resolve() if data_dir.exists() else None
    if data is None:
        typer.secho(
            f"shared data not found at {data_dir}: only the 'default' tenant can be created", fg="yellow"
        )
    start = time.perf_counter()
    try:
        import_demo_catalogs(tenants, settings.data_dir, data, only=only, if_missing=if_missing)
        import_demo_query_log(tenants, data)
        if vectors:  # before the models: SIMILAR_ITEMS reuses the text vectors
            _vectors(settings, data, images)
        if recs:
            _recs(settings, store, data)
        if ranker:
            _ranker(settings, tenants, data)
    except AisleError as exc:
        fail(exc)
    typer.echo(f"demo ready in {time.perf_counter() - start:.0f}s")


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
