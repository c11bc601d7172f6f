"""CUSTOMERS_ALSO_VIEW on Spark: the session table of :func:`aisle.recs.models.also_view.session_table`.

Spark groups the view events into sessions (click order, last click, sessions of two events or more);
the driver then builds the model with the shared :func:`~aisle.recs.models.also_view.fit_session_knn`.
The model holds every session, so the driver must hold them anyway (YooChoose 100k: 0.1M events).
"""

from __future__ import annotations

import polars as pl
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from aisle.recs.models.also_view import SessionKnnModel, SessionKnnParams, fit_session_knn
from aisle.recs.spark.session import to_polars


def train_session_knn_spark(events: DataFrame, params: SessionKnnParams | None = None) -> SessionKnnModel:
    """:func:`~aisle.recs.models.also_view.train_session_knn` with Spark grouping.

    ``events`` has ``session_id, item_id, ts`` (unix s), optional ``seq`` (position in the event log:
    events of a session sharing a ``ts`` keep that order, as the embedded engine keeps the file order)
    and optional ``event_type`` (only ``view`` events are used when present).
    """
    if "event_type" in events.columns:
        events = events.where(F.col("event_type") == "view")
    seq = F.col("seq").cast("long") if "seq" in events.columns else F.lit(0).cast("long")
    ev = events.select(
        F.col("session_id").cast("string"),
        F.col("item_id").cast("string"),
        F.col("ts").cast("double"),
        seq.alias("seq"),
    ).withColumn("n", F.count("*").over(Window.partitionBy("session_id")))
    sessions = (
        ev.where(F.col("n") >= 2)
        .groupBy("session_id")
        .agg(
            F.sort_array(F.collect_list(F.struct("ts", "seq", "item_id"))).alias("e"), F.max("ts").alias("t")
        )
        .select("session_id", F.col("e.item_id").alias("items"), "t")
    )
    return fit_session_knn(to_polars(sessions), params or SessionKnnParams())


def train(events: DataFrame, categories: pl.DataFrame | None = None) -> SessionKnnModel:
    """The model-type table's Spark counter (:mod:`aisle.recs.model_types`): ``categories`` unused."""
    del categories
    return train_session_knn_spark(events)
