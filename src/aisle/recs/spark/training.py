"""``aisle train --engine spark``: each model's Spark trainer on Parquet read from object storage."""

from __future__ import annotations

from typing import Any

import polars as pl
from pyspark.sql import SparkSession

from aisle.recs.models.base import ModelType
from aisle.recs.spark.also_view import train_session_knn_spark
from aisle.recs.spark.bought_together import train_bought_together_spark
from aisle.recs.spark.bundles import train_bundles_spark
from aisle.recs.spark.good_better_best import train_good_better_best_spark
from aisle.recs.spark.session import read_parquet

SPARK_TYPES = (
    ModelType.FREQUENTLY_BOUGHT_TOGETHER,
    ModelType.CUSTOMERS_ALSO_VIEW,
    ModelType.BUNDLE_RECOMMENDATIONS,
    ModelType.GOOD_BETTER_BEST,
)


def train_spark(
    spark: SparkSession, model_type: ModelType, uri: str, categories: pl.DataFrame | None = None
) -> Any:
    """Train ``model_type`` from the Parquet at ``uri`` (a local path or a URI Spark reads).

    ``uri`` holds purchase lines (``basket_id`` or ``session_id``, ``item_id``, optional ``ts``) for
    FREQUENTLY_BOUGHT_TOGETHER and BUNDLE_RECOMMENDATIONS, events (``session_id, item_id, ts``, optional
    ``seq`` and ``event_type``) for CUSTOMERS_ALSO_VIEW, catalog products for GOOD_BETTER_BEST.
    ``categories`` (``item_id, category``) is needed by BUNDLE_RECOMMENDATIONS, optional for FBT.

    Raises:
        ValueError: a type Spark does not train (SIMILAR_ITEMS encodes text: embedded only), missing
            categories, or data a model cannot train on.
    """
    data = read_parquet(spark, uri)
    if model_type in (ModelType.FREQUENTLY_BOUGHT_TOGETHER, ModelType.BUNDLE_RECOMMENDATIONS):
        if "basket_id" not in data.columns:
            data = data.withColumnRenamed("session_id", "basket_id")
        if model_type is ModelType.FREQUENTLY_BOUGHT_TOGETHER:
            return train_bought_together_spark(data, categories)
        if categories is None:
            raise ValueError("BUNDLE_RECOMMENDATIONS needs item categories")
        return train_bundles_spark(data, categories)
    if model_type is ModelType.CUSTOMERS_ALSO_VIEW:
        return train_session_knn_spark(data)
    if model_type is ModelType.GOOD_BETTER_BEST:
        return train_good_better_best_spark(data)
    raise ValueError(f"{model_type.value} is not trained on Spark (engine 'embedded' only)")
