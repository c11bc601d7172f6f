"""The model-type table: one row per :class:`~aisle.recs.models.base.ModelType`, read wherever a model
type used to be branched on (training, Spark, loading, the registry, the demo, bundles).

A row says what the type learns from (event types and :class:`DataSource`), which page types it serves,
how its artifact is written and read back, which embedded trainer and which Spark counter build it, and
which demo container serves it. A new model type is one module under ``aisle.recs.models`` (its
recommender, ``to_arrays``/``from_arrays`` or its own artifact functions) plus one row here.

The trainer and the Spark counter are named, not imported (``"module:function"``, resolved on use by
:meth:`ModelTypeRow.trainer` and by :func:`aisle.recs.spark.training.train_spark`): serving imports this
table to load models and never loads training code or pyspark through it.
"""

from __future__ import annotations

import importlib
import io
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
import polars as pl

from aisle.recs.models.also_view import SessionKnnModel
from aisle.recs.models.base import ModelType, Recommender
from aisle.recs.models.bought_together import BoughtTogetherModel
from aisle.recs.models.bundles import BundleModel, BundleParams
from aisle.recs.models.good_better_best import GoodBetterBestModel, GoodBetterBestParams
from aisle.recs.models.similar import SimilarItemsModel
from aisle.recs.registry import ArtifactReader, ArtifactWriter

Progress = Callable[[str], None]


class DataSource(StrEnum):
    """Where a model type's training data comes from (read by :mod:`aisle.recs.training.sources`)."""

    VIEWS = "views"
    """Session views: YooChoose (default) or REES46 events, ``session_id, item_id, ts, event_type``."""
    BASKETS = "baskets"
    """Complete Journey purchase lines (``basket_id, item_id, ts``) and item categories."""
    CATALOG = "catalog"
    """The tenant's current catalog in storage."""


@dataclass
class TrainingData:
    """What a trainer receives; the fields its row's :class:`DataSource` fills, the others None.

    Attributes:
        events: VIEWS, canonical events (``session_id, item_id, ts``, optional ``event_type``).
        lines: BASKETS, purchase lines (``basket_id`` or ``session_id``, ``item_id``, optional ``ts``).
        categories: BASKETS, ``item_id, category``.
        products: CATALOG, the catalog's products (``id`` + attributes).
        vectors: CATALOG, precomputed text vectors of ``products`` (float32, catalog row order) or None.
        threads: encoder threads for a model that encodes text.
        progress: receives progress lines.
    """

    events: pl.DataFrame | None = None
    lines: pl.DataFrame | None = None
    categories: pl.DataFrame | None = None
    products: pl.DataFrame | None = None
    vectors: np.ndarray | None = None
    threads: int = 2
    progress: Progress = print


@dataclass(frozen=True)
class DemoPlacement:
    """The demo container serving a model type (``aisle demo``): one slot of 20 items."""

    tenant: str
    container_id: str


Load = Callable[[ArtifactReader, dict[str, Any]], Recommender]
Save = Callable[[ArtifactWriter, Any], None]


@dataclass(frozen=True)
class ModelTypeRow:
    """One model type. See the module docstring; :data:`MODEL_TYPES` holds one per ``ModelType``."""

    model_type: ModelType
    learns_from: tuple[str, ...]
    """Event types the model learns from (empty: the catalog only)."""
    data: DataSource
    page_types: tuple[str, ...]
    """Page types it serves by default (spec "Model types"; ``GET /models?pageType=`` filters on them)."""
    train: str
    """The embedded trainer, ``"module:function"``: ``(TrainingData) -> model``."""
    load: Load
    """Its artifact (``ArtifactReader``, ``params.json``) -> a ready recommender."""
    save: Save
    """Writes the model's artifact files (``params.json`` is written by the caller)."""
    spark: str | None = None
    """The Spark counter, ``"module:function"``: ``(spark DataFrame, categories or None) -> model``;
    None: embedded only."""
    demo: DemoPlacement | None = None
    needs_embeddings: bool = False
    """Trained from the text vectors of the catalog (the demo's background builder trains it)."""
    bundles: bool = False
    """Serves bundle plans (``GET /bundles``, ``POST /bundles/recommendations``)."""
    recipe: int = 0
    """Version of the trainer's recipe, part of a model's data fingerprint when above 0: bumping it
    makes the demo build retrain models an older recipe trained."""

    def trainer(self) -> Callable[[TrainingData], Any]:
        """The embedded trainer (imported on first use)."""
        return resolve(self.train)


def resolve(path: str) -> Callable[..., Any]:
    """The function named ``"package.module:function"``, imported now."""
    module, _, name = path.partition(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return found


def parquet_bytes(df: pl.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.write_parquet(buf, compression="zstd")
    return buf.getvalue()


def _read_parquet(reader: ArtifactReader, name: str) -> pl.DataFrame:
    return pl.read_parquet(io.BytesIO(reader.get_bytes(name)))


def _save_arrays(writer: ArtifactWriter, model: Any) -> None:
    writer.put_arrays("model.npz", model.to_arrays())


def _arrays(cls: Any) -> Load:
    def load(reader: ArtifactReader, params: dict[str, Any]) -> Recommender:
        model: Recommender = cls.from_arrays(reader.get_arrays("model.npz"), params)
        return model

    return load


def _load_tiers(reader: ArtifactReader, params: dict[str, Any]) -> Recommender:
    return GoodBetterBestModel(_read_parquet(reader, "products.parquet"), GoodBetterBestParams(**params))


def _save_tiers(writer: ArtifactWriter, model: Any) -> None:
    writer.put_bytes("products.parquet", parquet_bytes(model.to_table()))


BUNDLE_TABLES = ("item_category", "complements", "top", "cat_item")


def _load_bundles(reader: ArtifactReader, params: dict[str, Any]) -> Recommender:
    tables = {n: _read_parquet(reader, f"{n}.parquet") for n in BUNDLE_TABLES}
    return BundleModel(**tables, params=BundleParams(**params))  # type: ignore[arg-type]


def _save_bundles(writer: ArtifactWriter, model: Any) -> None:
    for name, table in model.tables().items():
        writer.put_bytes(f"{name}.parquet", parquet_bytes(table))


_ROWS = (
    ModelTypeRow(
        ModelType.SIMILAR_ITEMS,
        learns_from=(),
        data=DataSource.CATALOG,
        page_types=("product",),
        train="aisle.recs.training.trainers:similar",
        load=_arrays(SimilarItemsModel),
        save=_save_arrays,
        demo=DemoPlacement("fashion", "similar-items"),
        needs_embeddings=True,
    ),
    ModelTypeRow(
        ModelType.GOOD_BETTER_BEST,
        learns_from=(),
        data=DataSource.CATALOG,
        page_types=("product",),
        train="aisle.recs.training.trainers:good_better_best",
        load=_load_tiers,
        save=_save_tiers,
        spark="aisle.recs.spark.good_better_best:train",
        demo=DemoPlacement("fashion", "good-better-best"),
    ),
    ModelTypeRow(
        ModelType.FREQUENTLY_BOUGHT_TOGETHER,
        learns_from=("purchase",),
        data=DataSource.BASKETS,
        page_types=("product", "cart", "checkout"),
        train="aisle.recs.training.trainers:bought_together",
        load=_arrays(BoughtTogetherModel),
        save=_save_arrays,
        spark="aisle.recs.spark.bought_together:train",
        demo=DemoPlacement("default", "bought-together"),
        recipe=3,  # + basket-size (recall@10 weight) factor
    ),
    ModelTypeRow(
        ModelType.BUNDLE_RECOMMENDATIONS,
        learns_from=("purchase",),
        data=DataSource.BASKETS,
        page_types=("product", "cart"),
        train="aisle.recs.training.trainers:bundles",
        load=_load_bundles,
        save=_save_bundles,
        spark="aisle.recs.spark.bundles:train",
        demo=DemoPlacement("default", "bundles"),
        bundles=True,
    ),
    ModelTypeRow(
        ModelType.CUSTOMERS_ALSO_VIEW,
        learns_from=("view",),
        data=DataSource.VIEWS,
        page_types=("product", "cart"),
        train="aisle.recs.training.trainers:also_view",
        load=_arrays(SessionKnnModel),
        save=_save_arrays,
        spark="aisle.recs.spark.also_view:train",
        demo=DemoPlacement("yoochoose", "also-viewed"),
    ),
)

MODEL_TYPES: dict[ModelType, ModelTypeRow] = {row.model_type: row for row in _ROWS}
"""Every model type's row, in the demo's order (fashion, default, yoochoose)."""


def row_of(model_type: ModelType) -> ModelTypeRow:
    """The row of ``model_type``. Raises ValueError for a type without one."""
    try:
        return MODEL_TYPES[model_type]
    except KeyError:
        raise ValueError(f"no row for model type {model_type}") from None


def default_model_id(model_type: ModelType) -> str:
    """``CUSTOMERS_ALSO_VIEW`` -> ``customers-also-view``."""
    return model_type.value.lower().replace("_", "-")
