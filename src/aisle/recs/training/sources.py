"""Each :class:`~aisle.recs.model_types.DataSource`'s training data, for ``aisle train`` (both engines).

:func:`read` gives the :class:`~aisle.recs.model_types.TrainingData` an embedded trainer takes;
:func:`export` writes the same data as Parquet in the tenant's ``datasets/`` for a Spark counter (the
catalog is Parquet in storage already). Both return the ``info`` the registry record keeps: where the
data came from and which version of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from aisle.catalog.store import CatalogStore
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.recs import events, snapshots
from aisle.recs.model_types import DataSource, ModelTypeRow, TrainingData
from aisle.recs.training.trainers import vector_search_embeddings

Progress = Callable[[str], None]


@dataclass(frozen=True)
class SourceOptions:
    """Where and what to read.

    Attributes:
        tenants: the tenants of the object store (``tenant``'s catalog, vector search's vectors).
        tenant: the tenant trained for.
        data_dir: the shared data sets (YooChoose, REES46).
        vectors_dir: ``AISLE_DATA_DIR``, where vector search keeps its built text vectors (or None).
        events: VIEWS: ``yoochoose`` (default) or ``rees46``.
        max_week: BASKETS: train on Complete Journey weeks before this one.
        threads: encoder threads (SIMILAR_ITEMS without vectors).
        progress: receives progress lines.
    """

    tenants: Tenants
    tenant: str
    data_dir: Path
    vectors_dir: Path | None = None
    events: str | None = None
    max_week: int = 49
    threads: int = 2
    progress: Progress = print

    @property
    def scope(self) -> BlobStore:
        return self.tenants.scope(self.tenant)


def read(row: ModelTypeRow, options: SourceOptions) -> tuple[TrainingData, dict[str, Any]]:
    """The training data of ``row``'s data source and its ``info``.

    Raises:
        FileNotFoundError: a data set is missing; CatalogNotFound (404) for CATALOG without a catalog.
    """
    base = TrainingData(threads=options.threads, progress=options.progress)
    if row.data is DataSource.VIEWS:
        source = options.events or "yoochoose"
        base.events = _views(options)
        return base, {"source": source}
    if row.data is DataSource.BASKETS:
        base.lines = events.completejourney_lines(max_week=options.max_week)
        base.categories = events.completejourney_categories()
        return base, {"source": "completejourney", "max_week": options.max_week}
    catalog = CatalogStore(options.scope).load()
    base.products = catalog.products
    if row.needs_embeddings:
        base.vectors = vector_search_embeddings(options.tenants, options.tenant, options.vectors_dir, catalog)
    return base, {"catalog_version": catalog.version}


def export(
    row: ModelTypeRow, options: SourceOptions, given_uri: str | None
) -> tuple[str | None, pl.DataFrame | None, dict[str, Any]]:
    """``row``'s data as Parquet in the tenant scope for Spark: ``(path in the scope or None when
    ``given_uri`` names the input already, item categories or None, info)``.

    Raises as :func:`read`.
    """
    if row.data is DataSource.VIEWS:
        source = options.events or "yoochoose"
        path = (
            None
            if given_uri
            else snapshots.write_snapshot(options.scope, f"{source}-events", _views(options))
        )
        return path, None, {"source": source}
    if row.data is DataSource.BASKETS:
        categories = events.completejourney_categories()
        path = None
        if given_uri is None:
            lines = events.completejourney_lines(max_week=options.max_week).select(
                "basket_id", "item_id", "ts"
            )
            path = snapshots.write_snapshot(
                options.scope, f"completejourney-lines-w{options.max_week}", lines
            )
        return path, categories, {"source": "completejourney", "max_week": options.max_week}
    catalog = CatalogStore(options.scope).load()
    return f"catalog/{catalog.version}/products.parquet", None, {"catalog_version": catalog.version}


def view_events(options: SourceOptions) -> pl.DataFrame:
    """The canonical events of the VIEWS source (``options.events``: yoochoose or rees46), every type.

    Raises FileNotFoundError when the data set is missing."""
    return _views(options)


def _views(options: SourceOptions) -> pl.DataFrame:
    if options.events == "rees46":
        return events.rees46_events(options.data_dir)
    return events.yoochoose_events(options.data_dir)
