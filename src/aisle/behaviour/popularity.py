"""The ``refresh_popularity`` job: the tenant's popularity and trending artifact from its shopper events.

The behaviour engine hands the job to the edit service's job runner
(:meth:`aisle.behaviour.engine.BehaviourEngine.job_handlers`); submitted with ``POST /popularity/refresh``
and polled at ``GET /jobs/{jobId}``, it reads the shopper events of the
tenant's analytics log (``outcomes``: every event ``POST /events`` accepted, each event id once) of the
last 90 days, computes per product the windowed counts, ``popularity`` and ``trending``
(:mod:`aisle.recs.popularity`, ``now`` = the newest event) and publishes them as the next version of
the artifact (:mod:`aisle.recs.popularity_store`: tables first, the pointer last). The predict service
picks it up within :data:`aisle.recs.serving.popularity.POPULARITY_TTL_S` seconds and orders the
backfill of short lists with it. Idempotent: a retried attempt publishes one more version.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from aisle.analytics.log import ParquetLog, day_of
from aisle.core.config import Settings
from aisle.core.storage import BlobStore, PrefixBlobStore
from aisle.recs import popularity_store
from aisle.recs.jobs import Job, JobHandler, Progress
from aisle.recs.popularity import DAY_S, PopularityParams

REFRESH_POPULARITY = "refresh_popularity"


def log_events(log: ParquetLog, tenant: str, days: float, now: float | None = None) -> pl.DataFrame:
    """The tenant's logged shopper events of the ``days`` days up to ``now`` (default: the clock) as
    ``item_id, event_type, ts`` (events without a product left out, an event id counted once)."""
    end = datetime.now(UTC).timestamp() if now is None else now
    files = log.files(tenant, "outcomes", day_of(end - days * DAY_S), day_of(end) + timedelta(days=1))
    if not files:
        return pl.DataFrame(schema={"item_id": pl.Utf8, "event_type": pl.Utf8, "ts": pl.Float64})
    frame = pl.read_parquet(files, columns=["event_id", "event_type", "ts", "product_id"])
    return (
        frame.filter(pl.col("product_id").is_not_null(), pl.col("ts") <= end)
        .with_row_index("row")
        .with_columns(pl.col("event_id").fill_null(pl.col("row").cast(pl.Utf8)))
        .unique(subset=["event_id"], keep="first", maintain_order=True)
        .select(item_id=pl.col("product_id"), event_type=pl.col("event_type"), ts=pl.col("ts"))
    )


def refresh_popularity_handler(settings: Settings, store: BlobStore) -> JobHandler:
    """The ``refresh_popularity`` job's handler over the bucket ``store`` (log cache under
    ``settings.data_dir``)."""

    def handle(scope: PrefixBlobStore, job: Job, progress: Progress) -> dict[str, Any]:
        params = PopularityParams()
        progress(5, "reading the shopper events of the analytics log")
        log = ParquetLog(store, Path(settings.data_dir) / "analytics")
        events = log_events(log, job.tenant, max(params.windows))
        progress(50, f"{events.height} events; computing popularity and trending")
        record = popularity_store.refresh(scope, events, params=params, info={"source": "events"})
        return {
            "popularityVersion": record.version,
            "events": record.events,
            "products": record.items,
            "until": record.now,
            "windows": record.windows,
        }

    return handle
