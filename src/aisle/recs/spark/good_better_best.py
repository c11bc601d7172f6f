"""GOOD_BETTER_BEST on Spark: each leaf's price tier bounds as exact percentiles over DataFrames.

Spark prepares the priced products (the catalog's Parquet, optional popularity) and computes per leaf
the 1/3 and 2/3 percentiles of log price (``percentile``: exact, linear interpolation, as polars'
``quantile(.., "linear")``); the shared :func:`~aisle.recs.models.good_better_best.assign_tiers` sets
the tiers. The products table is the model, so the driver holds it.
"""

from __future__ import annotations

import polars as pl
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from aisle.recs.models.good_better_best import (
    GoodBetterBestModel,
    GoodBetterBestParams,
    assign_tiers,
    tier_columns,
)
from aisle.recs.spark.session import to_polars


def train_good_better_best_spark(
    products: DataFrame, popularity: DataFrame | None = None, params: GoodBetterBestParams | None = None
) -> GoodBetterBestModel:
    """:func:`~aisle.recs.models.good_better_best.train_good_better_best` with Spark aggregation.

    ``products``: catalog rows (``id``, ``price``, a leaf column); ``popularity``: ``item_id,
    popularity``.

    Raises:
        ValueError: the catalog has no price or no category column.
    """
    leaf, keep = tier_columns(products.columns)
    df = products.select(
        F.col("id").cast("string"),
        F.col(leaf).cast("string").alias("leaf"),
        F.col("price").cast("double"),
        *keep,
    ).where(F.col("leaf").isNotNull() & (F.col("price") > 0))
    if popularity is not None:
        pop = popularity.select(
            F.col("item_id").cast("string").alias("id"), F.col("popularity").cast("double")
        )
        df = df.join(pop, "id", "left")
    else:
        df = df.withColumn("popularity", F.lit(0.0))
    df = df.fillna({"popularity": 0.0}).withColumn("lp", F.log(F.col("price"))).persist()
    try:
        bounds = df.groupBy("leaf").agg(
            F.percentile("lp", F.lit(1 / 3)).alias("q1"),
            F.percentile("lp", F.lit(2 / 3)).alias("q2"),
            F.count("*").alias("n"),
        )
        table = to_polars(df)
        bounds_table = to_polars(bounds).with_columns(pl.col("n").cast(pl.UInt32))
    finally:
        df.unpersist()
    return assign_tiers(table, bounds_table, params or GoodBetterBestParams())


def train(products: DataFrame, categories: pl.DataFrame | None = None) -> GoodBetterBestModel:
    """The model-type table's Spark counter (:mod:`aisle.recs.model_types`): the catalog's products;
    ``categories`` unused."""
    del categories
    return train_good_better_best_spark(products)
