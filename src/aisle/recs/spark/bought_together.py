"""FREQUENTLY_BOUGHT_TOGETHER on Spark: :class:`CoPurchaseCounts` from purchase lines as DataFrames.

The same counts as :func:`aisle.recs.models.bought_together.count_copurchases` (sparse products of the
basket x item matrix there, a self-join of the lines on the basket here, each unordered pair
once), then the shared
:func:`~aisle.recs.models.bought_together.fit_bought_together`. The pair sums are collected to the
driver, which must hold them (Complete Journey: 21.9M pairs, about 0.5 GB).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import scipy.sparse as sp
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from aisle.recs.models.baskets import WEEK_SECONDS, category_codes, recall_weight, recency_weight
from aisle.recs.models.bought_together import (
    BoughtTogetherModel,
    BoughtTogetherParams,
    CoPurchaseCounts,
    fit_bought_together,
)
from aisle.recs.spark.session import SPARK_OPS, basket_lines, index_frame, to_polars


def train_bought_together_spark(
    lines: DataFrame, categories: pl.DataFrame | None = None, params: BoughtTogetherParams | None = None
) -> BoughtTogetherModel:
    """:func:`~aisle.recs.models.bought_together.train_bought_together` with Spark counting.

    ``lines`` has ``basket_id, item_id`` and optional ``ts`` (unix s); ``categories`` (``item_id,
    category``, catalog-sized) is read on the driver.

    Raises:
        ValueError: no line has both a ``basket_id`` and an ``item_id``.
    """
    p = params or BoughtTogetherParams()
    return fit_bought_together(count_copurchases_spark(lines, categories, p), p)


def _csr(
    rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int], *data: np.ndarray
) -> list[sp.csr_matrix]:
    """CSR matrices sharing one structure (rows, then columns ascending) for each ``data`` vector."""
    order = np.lexsort((cols, rows))
    indptr = np.r_[0, np.cumsum(np.bincount(rows, minlength=shape[0]))].astype(np.int64)
    indices = cols[order].astype(np.int32)
    return [sp.csr_matrix((d[order].astype(np.float64), indices, indptr), shape=shape) for d in data]


def _basket_weights(lines: DataFrame, p: BoughtTogetherParams) -> DataFrame:
    """``basket_id, b, size, w, v`` per basket (see :class:`CoPurchaseCounts`), ``b`` an int code."""
    baskets = lines.groupBy("basket_id").agg(F.max("ts").alias("ts"), F.count("*").alias("size"))
    newest = baskets.agg(F.max("ts")).first()[0]  # type: ignore[index]
    newest = 0.0 if newest is None else float(newest)  # baskets without a time take the newest one
    baskets = baskets.fillna({"ts": newest})
    if p.decay_weeks <= 0:
        w = F.lit(1.0)
    else:
        w = recency_weight((F.lit(newest) - F.col("ts")) / WEEK_SECONDS, p.decay_weeks, SPARK_OPS)
    baskets = baskets.withColumn("w", w)
    lines_n, weighted = baskets.agg(F.sum("size"), F.sum(F.col("size") * F.col("w"))).first()  # type: ignore[misc]
    if p.decay_weeks > 0:  # scaled to mean 1 per line
        baskets = baskets.withColumn("w", F.col("w") * (float(lines_n) / float(weighted)))
    # an int code per basket (one small window over the basket table) makes the pair self-join cheaper
    return baskets.withColumn("v", recall_weight(F.col("w"), F.col("size"), SPARK_OPS)).select(
        "basket_id", F.row_number().over(Window.orderBy("basket_id")).alias("b"), "size", "w", "v"
    )


def count_copurchases_spark(
    lines: DataFrame, categories: pl.DataFrame | None, p: BoughtTogetherParams
) -> CoPurchaseCounts:
    """The counts of :class:`CoPurchaseCounts` from ``lines`` (see :func:`train_bought_together_spark`)."""
    spark = lines.sparkSession
    ts = F.col("ts").cast("double") if "ts" in lines.columns else F.lit(0.0)
    distinct = (
        lines.select(F.col("basket_id").cast("string"), F.col("item_id").cast("string"), ts.alias("ts"))
        .dropna(subset=["basket_id", "item_id"])
        .groupBy("basket_id", "item_id")
        .agg(F.max("ts").alias("ts"))
        .persist()
    )
    try:
        items_df = to_polars(distinct.select("item_id").distinct())
        if items_df.height == 0:
            raise ValueError("no purchase lines with both a basket_id and an item_id to train on")
        items = np.array(sorted(items_df["item_id"].to_list()))
        category = category_codes(items, categories)
        codes = index_frame(spark, "item_id", items, "j", k=category)
        coded = (
            distinct.join(F.broadcast(codes), "item_id")
            .join(_basket_weights(distinct, p), "basket_id")
            .select("b", "j", "k", "w", "v")
            .persist()
        )
        return _counts(coded, items, category)
    finally:
        distinct.unpersist()


def _counts(coded: DataFrame, items: np.ndarray, category: np.ndarray) -> CoPurchaseCounts:
    """Pair, item and category counts of ``coded`` (``b, j, k, w, v`` per distinct line),
    collected to the driver; unpersists ``coded``."""
    n_items, n_cats = len(items), int(category.max()) + 1
    try:
        other = coded.select("b", F.col("j").alias("j2"))
        pairs = to_polars(  # each unordered pair once (j < j2): the sums are symmetric
            coded.join(other, "b")
            .where(F.col("j") < F.col("j2"))
            .groupBy("j", "j2")
            .agg(F.sum("w").alias("c"), F.sum("v").alias("cv"), F.count("*").alias("n"))
        )
        j, j2 = pairs["j"].to_numpy(), pairs["j2"].to_numpy()
        c, cv, support = _csr(
            np.r_[j, j2],
            np.r_[j2, j],
            (n_items, n_items),
            *(np.tile(pairs[name].to_numpy(), 2) for name in ("c", "cv", "n")),
        )
        sums = to_polars(
            coded.groupBy("j").agg(F.count("*").alias("pop"), F.sum("w").alias("w"), F.sum("v").alias("v"))
        ).sort("j")
        per_item = {}
        for name in ("pop", "w", "v"):
            arr = np.zeros(n_items)
            arr[sums["j"].to_numpy()] = sums[name].to_numpy()
            per_item[name] = arr
        basket_cat = coded.select("b", "k").distinct()
        n_cat_df = to_polars(basket_cat.groupBy("k").count())
        n_cat = np.zeros(n_cats)
        n_cat[n_cat_df["k"].to_numpy()] = n_cat_df["count"].to_numpy()
        cc_df = to_polars(basket_cat.join(coded.select("b", "j"), "b").groupBy("k", "j").count())
        (cc,) = _csr(
            cc_df["k"].to_numpy(), cc_df["j"].to_numpy(), (n_cats, n_items), cc_df["count"].to_numpy()
        )
        n_baskets = coded.select("b").distinct().count()
    finally:
        coded.unpersist()
    return CoPurchaseCounts(
        items=items,
        category=category,
        n_baskets=int(n_baskets),
        c=c,
        cv=cv,
        support=support.data,
        pop=per_item["pop"],
        n_seed=per_item["w"],
        v_item=per_item["v"],
        n_cat=n_cat,
        cc=cc,
    )


def train(lines: DataFrame, categories: pl.DataFrame | None = None) -> BoughtTogetherModel:
    """The model-type table's Spark counter (:mod:`aisle.recs.model_types`): purchase lines
    (``basket_id`` or ``session_id``), optional ``item_id, category``."""
    return train_bought_together_spark(basket_lines(lines), categories)
