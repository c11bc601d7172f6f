"""The demo tenants: everything ``make run`` needs, built once and reused (``aisle demo`` runs it).

Steps, each idempotent (a second run costs seconds): the demo tenants' configuration, catalogs and
full-text indexes (fashion, homedepot, default, yoochoose); the Home Depot query log for
autocomplete; the suggestion indexes; the product embeddings for vector and image search; the demo
recommendation models (trained on the training part of each protocol only; SIMILAR_ITEMS reuses the
text embeddings) deployed into the demo containers; the Home Depot search ranker; and the fashion
tenant's fallback to a local Typesense server holding hardware it does not sell (:mod:`aisle.demo.external`).

``make run`` builds only the cheap steps before starting the services (``aisle demo --cheap``) and
leaves the embeddings, SIMILAR_ITEMS and the ranker to a background builder (:mod:`aisle.demo.builder`).
The cheap steps use two processes: the largest catalog (fashion) imports in a second process while
the others import here, and the recommendation models train in a second process while the suggestion
indexes and the external search demo are built here (measured on a quiet 2-core machine: 53.5 s of
steps one after the other, catalogs 24.9, recommendation models 15.8, suggestions 7.4, external 5.2).
"""

from __future__ import annotations

import multiprocessing
import tempfile
import time
from collections.abc import Callable, Collection
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from aisle.core.errors import AisleError
from aisle.core.progress import ProgressLine
from aisle.core.tenancy import Tenants

if TYPE_CHECKING:
    from aisle.core.config import Settings
    from aisle.core.storage import BlobStore


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
    from aisle.search.querylog import import_query_log

    log = data / "homedepot" / "queries_dev.txt" if data else None
    if log is None or not log.exists() or not tenants.exists("homedepot"):
        echo("homedepot: query log not available, autocomplete uses the catalog only")
        return
    echo(f"homedepot: query log, {import_query_log(tenants, 'homedepot', log)} distinct queries")


def _suggestions(settings, tenants, ready: list[str]) -> None:  # type: ignore[no-untyped-def]
    """Build each tenant's autocomplete candidates now (cached on disk), not on its first request."""
    from aisle.search.indexes import IndexRegistry
    from aisle.search.suggest.registry import SuggesterRegistry

    suggesters = SuggesterRegistry(tenants, IndexRegistry(tenants, settings.data_dir))
    for tenant in ready:
        started = time.perf_counter()
        try:
            suggesters.get(tenant)
        except AisleError as exc:
            typer.echo(f"{tenant}: suggestions not built: {exc.message}")
            continue
        typer.echo(f"{tenant}: suggestion index ready, {time.perf_counter() - started:.1f}s")


def _recs(settings, store, data: Path | None, heavy: bool) -> None:  # type: ignore[no-untyped-def]
    from aisle.demo.containers import announce_heavy, deploy_demo
    from aisle.demo.recs import train_demo_models

    records = train_demo_models(store, data, vectors_dir=settings.data_dir, progress=typer.echo, heavy=heavy)
    for container in deploy_demo(store, settings, records, progress=typer.echo):
        typer.echo(f"{container.tenant}: container '{container.container_id}' serves {container.model_id}")
    if not heavy:
        for container in announce_heavy(store, Tenants(store, ttl=0).names()):
            typer.echo(f"{container.tenant}: container '{container.container_id}' waits for its model")


def _child() -> ProcessPoolExecutor:
    """One worker process, started fresh (``spawn``: polars and tantivy thread pools do not survive a
    fork)."""
    return ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))


def _catalogs_child(
    settings: Settings, data: Path | None, only: tuple[str, ...], if_missing: bool
) -> list[str]:
    """:func:`import_demo_catalogs` of ``only`` in a worker process, over the bucket ``settings`` names."""
    from aisle.core.storage.resolver import open_blob_store_from_settings

    tenants = Tenants(open_blob_store_from_settings(settings), ttl=0)
    return import_demo_catalogs(tenants, settings.data_dir, data, only=only, if_missing=if_missing)


def _recs_child(settings: Settings, data: Path | None) -> None:
    """The cheap recommendation models (:func:`_recs`) in a worker process."""
    from aisle.core.storage.resolver import open_blob_store_from_settings

    _recs(settings, open_blob_store_from_settings(settings), data, heavy=False)


def _vectors(settings, data: Path | None, images: bool) -> None:  # type: ignore[no-untyped-def]
    from aisle.demo.vectors import build_demo_vectors

    build_demo_vectors(settings, data, images=images, echo=typer.echo, progress_for=ProgressLine)


def _ranker(settings, tenants, data: Path | None) -> None:  # type: ignore[no-untyped-def]
    from aisle.demo.ranker import train_demo_rankers

    train_demo_rankers(tenants, settings.data_dir, data, echo=typer.echo)


def _external(settings, tenants, data: Path | None) -> None:  # type: ignore[no-untyped-def]
    from aisle.demo.external import build_demo_external

    build_demo_external(settings, tenants, data, echo=typer.echo)


def _cheap_catalogs(
    settings: Settings, tenants: Tenants, data: Path | None, only: Collection[str], if_missing: bool
) -> list[str]:
    """The demo catalogs, the largest (fashion) imported in a worker process beside the others."""
    from aisle.catalog.datasets import demo_datasets

    wanted = [ds.tenant for ds in demo_datasets() if not only or ds.tenant in only]
    apart = tuple(t for t in wanted if t == "fashion")
    here = [t for t in wanted if t not in apart]
    with _child() as pool:
        beside = pool.submit(_catalogs_child, settings, data, apart, if_missing) if apart else None
        ready = (
            import_demo_catalogs(tenants, settings.data_dir, data, only=here, if_missing=if_missing)
            if here
            else []
        )
        ready += beside.result() if beside is not None else []
    return [t for t in wanted if t in ready]


def build_demo(
    settings: Settings,
    store: BlobStore,
    data: Path | None,
    *,
    only: Collection[str] = (),
    if_missing: bool = False,
    recs: bool = True,
    vectors: bool = True,
    images: bool = True,
    ranker: bool = True,
    cheap: bool = False,
) -> None:
    """Every step of the module docstring, in order, printing progress. Raises AisleError.

    ``cheap`` builds only what takes seconds (catalogs, indexes, query log, suggestion indexes, the
    recommendation models but SIMILAR_ITEMS, the external search demo) and leaves the embeddings,
    SIMILAR_ITEMS and the ranker to the background builder (:mod:`aisle.demo.builder`).
    """
    tenants = Tenants(store, ttl=0)
    before = set(tenants.names()) if if_missing else set()
    if cheap:  # make run's wait: two processes (see module docstring)
        ready = _cheap_catalogs(settings, tenants, data, only, if_missing)
    else:
        ready = import_demo_catalogs(tenants, settings.data_dir, data, only=only, if_missing=if_missing)
    import_demo_query_log(tenants, data)
    models = None
    with _child() as pool:
        if recs and cheap:
            models = pool.submit(_recs_child, settings, data)
        # new tenants only: a kept tenant's suggestions are cached already (the search service's warm-up
        # rebuilds what changed), so a second `make run` does not pay for them twice
        _suggestions(settings, tenants, [t for t in ready if t not in before])
        if vectors and not cheap:  # before the models: SIMILAR_ITEMS reuses the text vectors
            _vectors(settings, data, images)
        if recs and not cheap:
            _recs(settings, store, data, heavy=True)
        if ranker and not cheap:
            _ranker(settings, tenants, data)
        _external(settings, tenants, data)
        if models is not None:
            models.result()  # its error, if any, is this command's
