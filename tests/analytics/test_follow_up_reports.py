"""Guided search in analytics (issue 33): each search answer records the question it asked and the
questions its request answered; the follow-ups report counts them per query, from roll-ups and live,
and logs written before the columns existed still read (as answers that asked nothing)."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from aisle.analytics.log import ParquetLog
from aisle.analytics.recorder import Recorder
from aisle.analytics.records import ANSWER_SCHEMA, LATE_ANSWER_COLUMNS, Answer
from aisle.analytics.reports import AnalyticsReports
from aisle.core.analytics_layout import partition
from aisle.core.storage import BlobStore

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC).timestamp()
DAY_START = datetime(2026, 11, 20, tzinfo=UTC).timestamp()
DAY_END = DAY_START + 86400


def _search(token: str, query: str, at: float, follow_up: str = "", answered: int = 0) -> Answer:
    return Answer("t", token, "search", at, ("p1",), 500, query=query, visitor_id="v",
                  follow_up=follow_up, follow_ups_answered=answered)  # fmt: skip


LOG = [
    _search("a1", "shirts", T0, follow_up="color"),
    _search("a2", "shirts", T0 + 10, follow_up="brand", answered=1),  # answered colour, asked brand
    _search("a3", "shirts", T0 + 20, answered=2),  # answered brand too: no more questions
    _search("a4", "shirts", T0 + 30, follow_up="color"),
    _search("a5", "watches", T0 + 40, follow_up="brand"),
    _search("a6", "red nike shoes", T0 + 50),  # narrow: never asked
]


def _old_file(store: BlobStore, token: str, at: float) -> None:
    """An answers file as written before guided search: without its two columns."""
    old = [f for f in ANSWER_SCHEMA.names if f not in LATE_ANSWER_COLUMNS]
    row = _search(token, "shirts", at).row()
    frame = pl.DataFrame([{k: row[k] for k in old}]).with_columns(pl.col("total").cast(pl.Int64))
    buf = io.BytesIO()
    frame.write_parquet(buf)
    store.put(
        f"{partition('t', 'answers', datetime.fromtimestamp(at, UTC).date())}/old-00000001.parquet",
        buf.getvalue(),
    )


@pytest.fixture(params=["rolled-up", "live"])
def log(request: pytest.FixtureRequest, blob_store: BlobStore, tmp_path: Path) -> tuple[ParquetLog, str]:
    log = ParquetLog(blob_store, tmp_path / "cache")
    recorder = Recorder(log, start=False)
    for record in LOG:
        recorder.record(record)
    recorder.close()
    return log, request.param


def _reports(log: ParquetLog, mode: str) -> AnalyticsReports:
    now = T0 + 3 * 3600 if mode == "live" else T0 + 5 * 86400
    return AnalyticsReports(log, clock=lambda: now)


def test_questions_asked_and_answered_per_query(log: tuple[ParquetLog, str]) -> None:
    reports = _reports(*log)
    assert reports.follow_ups("t", DAY_START, DAY_END) == [
        {"query": "shirts", "searches": 4, "asked": 3, "askRate": 0.75, "answered": 2,
         "answerRate": 2 / 3, "attribute": "color"},
        {"query": "watches", "searches": 1, "asked": 1, "askRate": 1.0, "answered": 0,
         "answerRate": 0.0, "attribute": "brand"},
    ]  # fmt: skip
    assert reports.follow_ups("t", DAY_START, DAY_END, limit=1)[0]["query"] == "shirts"


def test_logs_from_before_guided_search_still_read(blob_store: BlobStore, tmp_path: Path) -> None:
    log = ParquetLog(blob_store, tmp_path / "cache")
    _old_file(blob_store, "old1", T0 - 60)
    for mode in ("live", "rolled-up"):
        only_old = _reports(log, mode)
        assert only_old.summary("t", DAY_START, DAY_END)["searches"] == 1
        assert only_old.follow_ups("t", DAY_START, DAY_END) == []  # an old answer asked nothing
    recorder = Recorder(log, start=False)
    recorder.record(LOG[0])
    recorder.close()
    mixed = _reports(log, "live")
    assert mixed.follow_ups("t", DAY_START, DAY_END) == [
        {"query": "shirts", "searches": 2, "asked": 1, "askRate": 0.5, "answered": 0,
         "answerRate": 0.0, "attribute": "color"},
    ]  # fmt: skip
