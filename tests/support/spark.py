"""A local Spark session for the tests that read or train on Spark."""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from tests.conftest import require

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@contextmanager
def local_spark(cores: int, shuffle_partitions: int) -> Iterator[SparkSession]:
    """A ``local[cores]`` session with ``shuffle_partitions`` shuffle partitions and ERROR logging, stopped
    on exit. Skips, or fails with ``CI=true`` (:func:`tests.conftest.require`), without Java or pyspark."""
    require(shutil.which("java") is not None, "Java (17 or newer) is needed for Spark")
    require(importlib.util.find_spec("pyspark") is not None, "the spark extra is not installed")
    from aisle.recs.spark.session import spark_session

    session = spark_session(f"local[{cores}]", {"spark.sql.shuffle.partitions": str(shuffle_partitions)})
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
