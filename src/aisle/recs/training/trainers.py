"""The embedded trainers: build a model of each type from data (numpy / scipy / polars in this process).

Every ``train_*`` function returns the model; :func:`aisle.recs.training.artifacts.save_model` writes and
registers it. The functions named after a model type (:func:`also_view`, :func:`bought_together`,
:func:`similar`, :func:`good_better_best`, :func:`bundles`) are the model-type table's trainers
(:mod:`aisle.recs.model_types`): each takes the :class:`~aisle.recs.model_types.TrainingData` of its
row's data source.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from aisle.recs.model_types import TrainingData
from aisle.recs.models.also_view import SessionKnnModel, SessionKnnParams, train_session_knn
from aisle.recs.models.bought_together import BoughtTogetherModel, BoughtTogetherParams, train_bought_together
from aisle.recs.models.bundles import BundleModel, train_bundles
from aisle.recs.models.good_better_best import GoodBetterBestModel, train_good_better_best
from aisle.recs.models.similar import SimilarItemsModel, SimilarParams, product_texts, train_similar_items

if TYPE_CHECKING:
    from aisle.catalog.store import Catalog
    from aisle.core.tenancy import Tenants

Progress = Callable[[str], None]


def train_also_view(views: pl.DataFrame, params: SessionKnnParams | None = None) -> SessionKnnModel:
    """CUSTOMERS_ALSO_VIEW from canonical events (views only are used when ``event_type`` is present)."""
    if "event_type" in views.columns:
        views = views.filter(pl.col("event_type") == "view")
    return train_session_knn(views.select("session_id", "item_id", "ts"), params)


def train_fbt(
    lines: pl.DataFrame, categories: pl.DataFrame | None, params: BoughtTogetherParams | None = None
) -> BoughtTogetherModel:
    """FREQUENTLY_BOUGHT_TOGETHER from purchase lines (``basket_id`` or ``session_id``, ``item_id``, and
    ``ts`` when present: recent baskets then weigh more)."""
    if "basket_id" not in lines.columns:
        lines = lines.with_columns(basket_id=pl.col("session_id"))
    columns = ["basket_id", "item_id"] + (["ts"] if "ts" in lines.columns else [])
    return train_bought_together(lines.select(columns), categories, params)


def train_bundle_model(lines: pl.DataFrame, categories: pl.DataFrame) -> BundleModel:
    """BUNDLE_RECOMMENDATIONS from purchase lines and ``item_id, category``."""
    if "basket_id" not in lines.columns:
        lines = lines.with_columns(basket_id=pl.col("session_id"))
    return train_bundles(lines.select("basket_id", "item_id"), categories)


def train_similar(
    products: pl.DataFrame,
    *,
    vectors: np.ndarray | None = None,
    params: SimilarParams | None = None,
    threads: int = 2,
    progress: Progress = print,
) -> SimilarItemsModel:
    """SIMILAR_ITEMS from a catalog (``id`` + attributes); encodes products unless ``vectors`` are given."""
    if vectors is None:
        from aisle.vectors import TextEncoder

        texts = product_texts(products)
        progress(f"encoding {len(texts)} products with MiniLM ({threads} threads)...")
        vectors = TextEncoder.load(threads=threads).encode(texts)
    else:
        progress(f"using {len(vectors)} precomputed product vectors")
    return train_similar_items(products, vectors, params)


def vector_search_embeddings(
    tenants: Tenants, tenant: str, data_dir: Path | None, catalog: Catalog
) -> np.ndarray | None:
    """The text vectors vector search already built for ``catalog`` under ``data_dir`` (float32,
    (products, 384), catalog row order), or None (no ``data_dir``, table not built, or the vector
    packages missing): SIMILAR_ITEMS then encodes the catalog itself.

    Sharing them saves encoding the catalog twice (fashion, 44k products: training took 24 s instead of
    488 s on a busy 2-core machine) and changes little: top-10 agreement in article type / gender /
    colour over every fashion product is 0.9776 / 0.9879 / 0.663 with these vectors, against
    0.9717 / 0.9891 / 0.658 with SIMILAR_ITEMS' own "name | brand | type | gender | colour" texts.
    """
    if data_dir is None:
        return None
    try:
        from aisle.vectors.build import built_text_vectors
    except ImportError:
        return None
    return built_text_vectors(tenants, tenant, data_dir, catalog)


def train_gbb(products: pl.DataFrame, popularity: pl.DataFrame | None = None) -> GoodBetterBestModel:
    """GOOD_BETTER_BEST from a catalog with ``price``; ``popularity`` (item_id, popularity) optional."""
    return train_good_better_best(products, popularity)


def _need(value: pl.DataFrame | None, what: str) -> pl.DataFrame:
    if value is None:
        raise ValueError(f"training data without {what}")
    return value


def also_view(data: TrainingData) -> SessionKnnModel:
    """CUSTOMERS_ALSO_VIEW from VIEWS (:func:`train_also_view`)."""
    return train_also_view(_need(data.events, "events"))


def bought_together(data: TrainingData) -> BoughtTogetherModel:
    """FREQUENTLY_BOUGHT_TOGETHER from BASKETS (:func:`train_fbt`)."""
    return train_fbt(_need(data.lines, "purchase lines"), data.categories)


def bundles(data: TrainingData) -> BundleModel:
    """BUNDLE_RECOMMENDATIONS from BASKETS (:func:`train_bundle_model`)."""
    return train_bundle_model(_need(data.lines, "purchase lines"), _need(data.categories, "item categories"))


def similar(data: TrainingData) -> SimilarItemsModel:
    """SIMILAR_ITEMS from the CATALOG and its text vectors when given (:func:`train_similar`)."""
    products = _need(data.products, "catalog products")
    return train_similar(products, vectors=data.vectors, threads=data.threads, progress=data.progress)


def good_better_best(data: TrainingData) -> GoodBetterBestModel:
    """GOOD_BETTER_BEST from the CATALOG (:func:`train_gbb`)."""
    return train_gbb(_need(data.products, "catalog products"))
