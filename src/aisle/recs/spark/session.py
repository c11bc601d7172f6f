"""The Spark session of a training run, the column ops of the shared formulas, and Parquet input."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

DEFAULT_MASTER = "local[*]"
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"


def spark_session(master: str | None = None, conf: dict[str, str] | None = None) -> SparkSession:
    """A Spark session on ``master``, else ``$SPARK_MASTER``, else ``local[*]`` (every core here).

    The UI and the console progress bars are off; ``conf`` adds or overrides settings (e.g.
    ``spark.sql.shuffle.partitions``, ``spark.driver.memory``, the ``spark.hadoop.fs.s3a.*`` of a
    cluster reading S3). An existing session of this process is reused (Spark allows one per JVM).

    In local mode, unless ``conf`` or ``spark-defaults.conf`` sets it, ``spark.sql.shuffle.partitions``
    is the number of cores instead of Spark's 200: the trainers persist shuffled frames, and every
    later scan of a persisted frame runs one task per partition (adaptive execution does not coalesce
    them): with 200 tiny tasks per scan, profiling FREQUENTLY_BOUGHT_TOGETHER on Complete Journey
    weeks < 49 took 11.5 minutes on 2 busy cores, with 2 partitions 3 minutes (see docs/spark.md).
    """
    builder = (
        SparkSession.builder.appName("aisle-train")
        .master(master or os.environ.get("SPARK_MASTER") or DEFAULT_MASTER)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    sc = spark.sparkContext
    if (sc.master or "").startswith("local") and not sc.getConf().contains(SHUFFLE_PARTITIONS):
        spark.conf.set(SHUFFLE_PARTITIONS, str(sc.defaultParallelism))
    return spark


@contextmanager
def training_session(master: str | None = None) -> Iterator[SparkSession]:
    """:func:`spark_session` for one training run: stopped at the end unless it was already running
    (a caller's, e.g. a test's, stays up)."""
    ours = SparkSession.getActiveSession() is None
    spark = spark_session(master)
    try:
        yield spark
    finally:
        if ours:
            spark.stop()


class SparkOps:
    """:class:`~aisle.recs.models.baskets.ColumnOps` over Spark columns."""

    def exp(self, x: Any) -> Column:
        return F.exp(x)

    def floor_at(self, x: Any, low: float) -> Column:
        return F.greatest(x, F.lit(low))

    def clip(self, x: Any, low: float, high: float) -> Column:
        return F.least(F.greatest(x, F.lit(low)), F.lit(high))


SPARK_OPS = SparkOps()


def read_parquet(spark: SparkSession, uri: str) -> DataFrame:
    """The Parquet file or folder at ``uri``: a local path, ``file://``, or any scheme the cluster's
    Hadoop file systems read (``s3a://`` needs the hadoop-aws jars, see docs/spark.md).

    Raises:
        FileNotFoundError: nothing Spark can read as Parquet at ``uri``.
    """
    from pyspark.errors import AnalysisException

    try:
        return spark.read.parquet(uri)
    except AnalysisException as exc:  # e.g. PATH_NOT_FOUND, UNABLE_TO_INFER_SCHEMA
        raise FileNotFoundError(f"no Parquet to train from at {uri}: {exc.getCondition()}") from None


def to_polars(df: DataFrame) -> pl.DataFrame:
    """Collect ``df`` to the driver through Arrow (the driver must hold it)."""
    table: pa.Table = df.toArrow()
    return pl.from_arrow(table)  # type: ignore[return-value]


def index_frame(
    spark: SparkSession, name: str, values: np.ndarray, code: str, **extra: np.ndarray
) -> DataFrame:
    """A frame ``name, code, *extra`` mapping ``values[i]`` to ``i`` (int32) and ``extra[..][i]``, built
    on the driver (catalog-sized) to join codes on."""
    columns = {name: pa.array(values.tolist()), code: pa.array(np.arange(len(values), dtype=np.int32))}
    return spark.createDataFrame(pa.table(columns | {k: pa.array(v) for k, v in extra.items()}))


def basket_lines(lines: DataFrame) -> DataFrame:
    """Purchase lines with a ``basket_id`` column (a ``session_id`` is taken as the basket)."""
    return lines if "basket_id" in lines.columns else lines.withColumnRenamed("session_id", "basket_id")
