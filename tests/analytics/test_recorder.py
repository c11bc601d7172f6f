"""The recorder never blocks: a full buffer drops and counts, a failed write is retried once."""

from __future__ import annotations

import threading

from aisle.analytics.recorder import Recorder
from aisle.analytics.records import Answer, Record


def _answer(i: int) -> Answer:
    return Answer("t", f"tok{i}", "search", 1.0e9 + i, ("p",), 1)


def test_full_buffer_drops_and_counts() -> None:
    batches: list[list[Record]] = []
    recorder = Recorder(batches.append, capacity=3, start=False)
    assert [recorder.record(_answer(i)) for i in range(5)] == [True, True, True, False, False]
    assert (recorder.recorded, recorder.dropped, recorder.pending()) == (3, 2, 3)
    assert recorder.flush() == 3
    assert [a.token for a in batches[0]] == ["tok0", "tok1", "tok2"]  # type: ignore[union-attr]
    assert recorder.record(_answer(9))  # room again after the flush


def test_failed_write_is_retried_once_then_dropped() -> None:
    calls: list[int] = []

    def flaky(batch: list[Record]) -> None:
        calls.append(len(batch))
        raise OSError("bucket down")

    recorder = Recorder(flaky, start=False)
    recorder.record(_answer(1))
    assert recorder.flush() == 0 and recorder.pending() == 1  # kept for one more attempt
    recorder.record(_answer(2))
    assert recorder.flush() == 0
    assert recorder.failed == 1  # the retried batch is dropped; the new one waits for its retry
    assert recorder.pending() == 1 and calls == [1, 1, 1]


def test_background_thread_writes_a_full_batch_without_being_asked() -> None:
    written = threading.Event()
    got: list[Record] = []

    def sink(batch: list[Record]) -> None:
        got.extend(batch)
        written.set()

    recorder = Recorder(sink, flush_s=3600, batch=2)  # the interval never comes: the batch size wakes it
    recorder.record(_answer(1))
    recorder.record(_answer(2))
    assert written.wait(30)
    recorder.close()
    assert len(got) == 2 and recorder.written == 2


def test_close_writes_what_is_left_and_refuses_more() -> None:
    got: list[Record] = []
    recorder = Recorder(got.extend, flush_s=3600)
    recorder.record(_answer(1))
    recorder.close()
    assert len(got) == 1
    assert not recorder.record(_answer(2)) and recorder.dropped == 1


def test_a_reused_writer_name_adds_files_and_never_replaces_one(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import duckdb

    from aisle.analytics.log import ParquetLog
    from aisle.core.storage import open_blob_store

    store = open_blob_store(f"file://{tmp_path / 'bucket'}")
    first = ParquetLog(store, tmp_path / "cache", writer="bench").write([_answer(i) for i in range(3)])
    again = ParquetLog(store, tmp_path / "cache", writer="bench").write([_answer(i) for i in range(10, 12)])
    assert len(set(first + again)) == 2  # the second process skipped the name the first one took
    log = ParquetLog(store, tmp_path / "cache")
    day = log.days("t", "answers")[0]
    files = log.files("t", "answers", day, day)
    tokens = duckdb.sql(f"SELECT token FROM read_parquet({files!r}) ORDER BY token").fetchall()
    assert [t for (t,) in tokens] == ["tok0", "tok1", "tok10", "tok11", "tok2"]
