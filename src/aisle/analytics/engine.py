"""The analytics engine's front door: what a service needs to record answers and events, and to read
the reports.

One :class:`AnalyticsEngine` per process: ``record`` hands an :class:`~aisle.analytics.records.Answer` or
:class:`~aisle.analytics.records.Outcome` to the process's :class:`~aisle.analytics.recorder.Recorder`
(never blocking), ``reports`` answers the analytics service, ``simulated`` tells which part of a
tenant's log the demo simulated (every page that shows it says so), ``close`` writes what is buffered.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from aisle.analytics.log import ROOT, ParquetLog
from aisle.analytics.recorder import Recorder
from aisle.analytics.records import Record
from aisle.core.config import Settings
from aisle.core.storage import BlobStore
from aisle.core.storage.blob import BlobNotFound

if TYPE_CHECKING:
    from aisle.analytics.reports import AnalyticsReports
    from aisle.experiments.model import Experiment

log = logging.getLogger("aisle.analytics")

SIMULATED = "simulated.json"
"""``<tenant>/analytics/simulated.json``: the period of the tenant's log that the demo simulated."""


@dataclass(frozen=True)
class SimulatedPeriod:
    """Days of a tenant's log written by the demo's traffic simulator, not by shoppers.

    Attributes:
        first, last: the first and last simulated day (UTC, inclusive).
        note: how the traffic was drawn (shown with the figures).
    """

    first: date
    last: date
    note: str

    def to_json(self) -> dict[str, str]:
        return {"from": self.first.isoformat(), "to": self.last.isoformat(), "note": self.note}


class AnalyticsEngine:
    """Recording and reports over one bucket.

    Args:
        store: the bucket; log_: the Parquet log in it.
        recorder: the process's buffer (None: recording is off, ``record`` does nothing).
        window_s: the attribution window of the reports (``AISLE_ATTRIBUTION_WINDOW_SECONDS``).
    """

    def __init__(
        self, store: BlobStore, log_: ParquetLog, recorder: Recorder | None, *, window_s: float = 3600.0
    ) -> None:
        self.store = store
        self.log = log_
        self.recorder = recorder
        self.window_s = window_s
        self._reports: AnalyticsReports | None = None

    @property
    def reports(self) -> AnalyticsReports:
        """The reports (made on first use: only the analytics service reads them, and DuckDB costs a
        recording process about 50 MiB it has no use for)."""
        if self._reports is None:
            from aisle.analytics.reports import AnalyticsReports

            self._reports = AnalyticsReports(self.log, window_s=self.window_s)
        return self._reports

    @classmethod
    def from_settings(cls, settings: Settings, store: BlobStore, *, record: bool = True) -> AnalyticsEngine:
        """The engine of one process: files fetched from a remote bucket are cached under
        ``data_dir/analytics``; ``record`` (and ``settings.analytics``) start the recorder."""
        parquet = ParquetLog(store, Path(settings.data_dir) / "analytics")
        recorder = None
        if record and settings.analytics:
            parquet.warm()
            recorder = Recorder(
                parquet, flush_s=settings.analytics_flush_seconds, capacity=settings.analytics_buffer
            )
        return cls(store, parquet, recorder, window_s=settings.attribution_window_seconds)

    def record(self, record: Record) -> None:
        """Buffer one answer or event for the log (a no-op when recording is off); never blocks."""
        if self.recorder is not None:
            self.recorder.record(record)

    def simulated(self, tenant: str) -> SimulatedPeriod | None:
        """The simulated part of ``tenant``'s log, or None when the demo simulated none."""
        try:
            raw = orjson.loads(self.store.get(f"{tenant}/{ROOT}/{SIMULATED}"))
        except BlobNotFound:
            return None
        return SimulatedPeriod(date.fromisoformat(raw["from"]), date.fromisoformat(raw["to"]), raw["note"])

    def mark_simulated(self, tenant: str, period: SimulatedPeriod) -> None:
        """Say that ``period`` of ``tenant``'s log was simulated (the demo, after writing it)."""
        self.store.put(f"{tenant}/{ROOT}/{SIMULATED}", orjson.dumps(period.to_json()))

    def experiment_results(self, tenant: str, experiment: Experiment) -> dict[str, Any]:
        """``experiment``'s results from the log (see :mod:`aisle.analytics.experiment_results`)."""
        from aisle.analytics.experiment_results import experiment_results

        return experiment_results(self.reports, tenant, experiment)

    def close(self) -> None:
        """Write what the recorder holds (a service's shutdown: uvicorn runs it on SIGTERM)."""
        if self.recorder is not None:
            self.recorder.close()
