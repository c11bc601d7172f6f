"""BUNDLE_RECOMMENDATIONS on Spark: a :class:`~aisle.recs.models.bundles.BundleCounter` over DataFrames.

Counts the same distinct baskets as the polars counter (joins of the coded lines on the basket); only
the counts, category-sized or limited to the chosen category pairs, reach the driver, where the shared
:func:`~aisle.recs.models.bundles.fit_bundles` scores them.
"""

from __future__ import annotations

import polars as pl
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from aisle.recs.models.bundles import BundleModel, BundleParams, bundle_codes, fit_bundles
from aisle.recs.spark.session import basket_lines, to_polars


class SparkBundleCounter:
    """:class:`~aisle.recs.models.bundles.BundleCounter` over ``coded``: distinct lines
    ``basket_id, i, k`` (persisted; call :meth:`close` when done)."""

    def __init__(self, coded: DataFrame) -> None:
        self.coded = coded.persist()
        self.bc = coded.select("basket_id", "k").distinct().persist()

    @classmethod
    def from_lines(cls, lines: DataFrame, items: pl.DataFrame) -> SparkBundleCounter:
        """From lines ``basket_id, item_id`` and the ``items`` of
        :func:`~aisle.recs.models.bundles.bundle_codes` (catalog-sized, sent to the executors)."""
        codes = lines.sparkSession.createDataFrame(items.select("item_id", "i", "k").to_arrow())
        coded = (
            lines.select(F.col("basket_id").cast("string"), F.col("item_id").cast("string"))
            .distinct()
            .join(F.broadcast(codes), "item_id")
            .select("basket_id", "i", "k")
        )
        return cls(coded)

    def close(self) -> None:
        self.bc.unpersist()
        self.coded.unpersist()

    def basket_count(self) -> int:
        return self.coded.select("basket_id").distinct().count()

    def category_baskets(self) -> pl.DataFrame:
        return _ints(to_polars(self.bc.groupBy("k").agg(F.count("*").alias("n_a"))), "k")

    def category_pairs(self) -> pl.DataFrame:
        other = self.bc.withColumnRenamed("k", "k2")
        pairs = (
            self.bc.join(other, "basket_id")
            .where(F.col("k") != F.col("k2"))
            .groupBy("k", "k2")
            .agg(F.count("*").alias("c"))
        )
        return _ints(to_polars(pairs), "k", "k2")

    def item_baskets(self) -> pl.DataFrame:
        return _ints(to_polars(self.coded.groupBy("i", "k").agg(F.count("*").alias("popularity"))), "i", "k")

    def category_item_baskets(self, pairs: pl.DataFrame) -> pl.DataFrame:
        spark = self.coded.sparkSession
        chosen = spark.createDataFrame(pairs.select("C", "k2").to_arrow())
        counts = (
            self.bc.withColumnRenamed("k", "C")
            .join(F.broadcast(chosen), "C")
            .join(self.coded.withColumnRenamed("k", "k2"), ["basket_id", "k2"])
            .groupBy("C", "k2", "i")
            .agg(F.count("*").alias("c"))
        )
        return _ints(to_polars(counts), "C", "k2", "i")


def _ints(df: pl.DataFrame, *codes: str) -> pl.DataFrame:
    """Codes as Int32 and counts as Int64, the dtypes of the polars counter."""
    return df.with_columns(
        [pl.col(c).cast(pl.Int32) for c in codes]
        + [pl.col(c).cast(pl.Int64) for c in df.columns if c not in codes]
    )


def train_bundles_spark(
    lines: DataFrame, categories: pl.DataFrame, params: BundleParams | None = None
) -> BundleModel:
    """:func:`~aisle.recs.models.bundles.train_bundles` with Spark counting: ``lines`` has
    ``basket_id, item_id``; ``categories`` (``item_id, category``) is read on the driver."""
    items, names = bundle_codes(categories)
    counter = SparkBundleCounter.from_lines(lines, items)
    try:
        return fit_bundles(counter, items, names, params or BundleParams())
    finally:
        counter.close()


def train(lines: DataFrame, categories: pl.DataFrame | None = None) -> BundleModel:
    """The model-type table's Spark counter (:mod:`aisle.recs.model_types`): purchase lines
    (``basket_id`` or ``session_id``) and ``item_id, category``.

    Raises:
        ValueError: no ``categories``.
    """
    if categories is None:
        raise ValueError("BUNDLE_RECOMMENDATIONS needs item categories")
    return train_bundles_spark(basket_lines(lines), categories)
