"""Events reach the analytics log through the event store's outbox, at least once."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from aisle.analytics.log import ParquetLog
from aisle.behaviour.outbox import drain
from aisle.core.events import Event, open_event_store_url
from aisle.core.storage import open_blob_store

T = 1_795_132_800.0  # 2026-11-20T00:00:00Z


def _rows(log: ParquetLog) -> list[dict[str, object]]:
    files = log.files("t", "outcomes", *[log.days("t", "outcomes")[i] for i in (0, -1)])
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def test_drain_moves_events_once_and_in_batches(tmp_path: Path) -> None:
    store = open_event_store_url(f"sqlite://{tmp_path / 'e.sqlite3'}")
    log = ParquetLog(open_blob_store(f"file://{tmp_path / 'bucket'}"), tmp_path / "cache")
    events = [Event("v", "click", f"p{i}", T + i * 3600, event_id=f"e{i}", position=i + 1) for i in range(30)]
    store.append("t", events, outbox=events)
    assert drain(store, log, "t", batch=7) == 30
    assert store.outbox("t", 100) == []
    rows = _rows(log)
    assert sorted(r["event_id"] for r in rows) == sorted(f"e{i}" for i in range(30))
    assert {r["position"] for r in rows} == set(range(1, 31))
    assert log.days("t", "outcomes")[0].isoformat() == "2026-11-20"  # day partitions by event time
    assert drain(store, log, "t") == 0


def test_a_failed_write_leaves_the_outbox_whole(tmp_path: Path) -> None:
    store = open_event_store_url(f"sqlite://{tmp_path / 'e.sqlite3'}")
    bucket = open_blob_store(f"file://{tmp_path / 'bucket'}")

    class Refusing(ParquetLog):
        def write(self, records):  # type: ignore[no-untyped-def]
            raise OSError("bucket down")

    event = Event("v", "purchase", "p", T, event_id="e1", price=5.0)
    store.append("t", [event], outbox=[event])
    with pytest.raises(OSError, match="bucket down"):
        drain(store, Refusing(bucket, tmp_path / "cache"), "t")
    assert [e for _, e in store.outbox("t", 10)] == [event]  # still there for the next drain
