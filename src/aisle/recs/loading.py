"""Load a registered model's artifact into a ready-to-serve :class:`Recommender`."""

from __future__ import annotations

import io

import polars as pl

from aisle.catalog.store import Catalog
from aisle.core.storage import BlobStore
from aisle.recs.models.also_view import SessionKnnModel
from aisle.recs.models.base import ModelType, Recommender
from aisle.recs.models.bought_together import BoughtTogetherModel
from aisle.recs.models.bundles import BundleModel, BundleParams
from aisle.recs.models.good_better_best import GoodBetterBestModel, GoodBetterBestParams
from aisle.recs.models.similar import SimilarItemsModel
from aisle.recs.registry import ArtifactReader, ModelRecord


def load_recommender(scope: BlobStore, record: ModelRecord, *, catalog: Catalog | None = None) -> Recommender:
    """The model of ``record`` from the tenant scope ``scope``.

    ``catalog`` is accepted for models that could use the current catalog; the artifacts are
    self-contained, so it is not needed today.

    Raises:
        ModelNotFound: an artifact file is missing.
        ValueError: the record's type has no loader.
    """
    reader = ArtifactReader(scope, record.artifact_uri)
    params = reader.get_json("params.json")
    t = record.model_type
    if t is ModelType.CUSTOMERS_ALSO_VIEW:
        return SessionKnnModel.from_arrays(reader.get_arrays("model.npz"), params)
    if t is ModelType.FREQUENTLY_BOUGHT_TOGETHER:
        return BoughtTogetherModel.from_arrays(reader.get_arrays("model.npz"), params)
    if t is ModelType.SIMILAR_ITEMS:
        return SimilarItemsModel.from_arrays(reader.get_arrays("model.npz"), params)
    if t is ModelType.GOOD_BETTER_BEST:
        table = pl.read_parquet(io.BytesIO(reader.get_bytes("products.parquet")))
        return GoodBetterBestModel(table, GoodBetterBestParams(**params))
    if t is ModelType.BUNDLE_RECOMMENDATIONS:
        names = ("item_category", "complements", "top", "cat_item")
        tables = {n: pl.read_parquet(io.BytesIO(reader.get_bytes(f"{n}.parquet"))) for n in names}
        return BundleModel(**tables, params=BundleParams(**params))  # type: ignore[arg-type]
    raise ValueError(f"no loader for model type {t}")
