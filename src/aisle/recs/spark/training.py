"""``aisle train --engine spark``: a model type's Spark counter (its row's ``spark``) on Parquet read from
object storage."""

from __future__ import annotations

from typing import Any

import polars as pl
from pyspark.sql import SparkSession

from aisle.recs.model_types import MODEL_TYPES, resolve, row_of
from aisle.recs.models.base import ModelType
from aisle.recs.spark.session import read_parquet

SPARK_TYPES = tuple(t for t, row in MODEL_TYPES.items() if row.spark is not None)
"""The model types with a Spark counter (all but SIMILAR_ITEMS, which encodes text: embedded only)."""


def train_spark(
    spark: SparkSession, model_type: ModelType, uri: str, categories: pl.DataFrame | None = None
) -> Any:
    """Train ``model_type`` from the Parquet at ``uri`` (a local path or a URI Spark reads).

    ``uri`` holds what the row's data source gives (:class:`aisle.recs.model_types.DataSource`):
    purchase lines (``basket_id`` or ``session_id``, ``item_id``, optional ``ts``) for BASKETS, events
    (``session_id, item_id, ts``, optional ``seq`` and ``event_type``) for VIEWS, catalog products for
    CATALOG. ``categories`` (``item_id, category``) is needed by BUNDLE_RECOMMENDATIONS, optional for FBT.

    Raises:
        ValueError: a type Spark does not train, missing categories, or data a model cannot train on.
    """
    row = row_of(model_type)
    if row.spark is None:
        raise ValueError(f"{model_type.value} is not trained on Spark (engine 'embedded' only)")
    return resolve(row.spark)(read_parquet(spark, uri), categories)
