"""The behaviour tables are plain Parquet that Spark reads as they are (``spark.read.parquet``), for a
tenant too large for one process: each published table read by Spark has the rows and columns DuckDB
and pyarrow read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pytest
from tests.support.spark import local_spark

from aisle.analytics.log import ParquetLog
from aisle.analytics.records import Answer, Outcome
from aisle.behaviour.store import TABLES, BehaviourStore, refresh
from aisle.core import analytics_layout as layout
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import tenant_scope

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NOW = 1_790_000_000.0
pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning")


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    """One local Spark session (skips, or fails in CI, without Java or pyspark)."""
    with local_spark(1, 1) as session:
        yield session


def _log(tmp: Path) -> ParquetLog:
    """Two arms of an experiment answering 25 queries in opposite orders, with clicks and purchases."""
    parquet = ParquetLog(open_blob_store(f"file://{tmp / 'bucket'}"), tmp / "cache", writer="w")
    records: list[Answer | Outcome] = []
    for q in range(25):
        for arm, shown in (("e:control", (f"a{q}", f"b{q}", f"c{q}")), ("e:b", (f"c{q}", f"a{q}", f"b{q}"))):
            for s in range(22):
                token = f"{q}-{arm}-{s}"
                at = NOW - 3 * 86400 + q * 100 + s
                records.append(Answer("t", token, "search", at, shown, 3, query=f"q{q}", variant=arm))
                if s % 3 == 0:
                    records.append(Outcome("t", f"{token}-c", "click", at + 1, "v", shown[0], token, 1))
                if s % 7 == 0:
                    records.append(Outcome("t", f"{token}-d", "click", at + 1, "v", shown[2], token, 3))
                    records.append(Outcome("t", f"{token}-p", "purchase", at + 9, "v", shown[2], token))
    records.append(Answer("t", "none", "search", NOW - 86400, (), 0, query="nothing"))
    parquet.write(records)
    return parquet


def _sorted(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in rows)


def test_spark_reads_every_published_behaviour_table(spark: SparkSession, tmp_path: Path) -> None:
    log = _log(tmp_path)
    record = refresh(log, "t", now=NOW)
    assert record.propensities is not None  # the arms moved the pairs: every table has its content
    published = BehaviourStore(log.store)
    for name in TABLES:
        path = tenant_scope(log.store, "t").local_path(
            layout.behaviour_file(record.version, f"{name}.parquet")
        )
        assert path is not None and Path(path).is_file()
        arrow = published.table("t", name, record.version)
        frame = spark.read.parquet(str(path))
        count = duckdb.sql(f"SELECT count(*) FROM read_parquet('{path}')").fetchall()[0][0]
        assert arrow.num_rows > 0, name
        assert frame.count() == arrow.num_rows == count == record.rows[name], name
        assert frame.columns == arrow.column_names, name
        assert _sorted([r.asDict() for r in frame.collect()]) == _sorted(arrow.to_pylist()), name
