"""The analytics engine's front door: what a service needs to record answers and events, and to read
the reports.

One :class:`AnalyticsEngine` per process: ``record`` hands an :class:`~aisle.analytics.records.Answer` or
:class:`~aisle.analytics.records.Outcome` to the process's :class:`~aisle.analytics.recorder.Recorder`
(never blocking), ``report`` answers the analytics service's routes, ``simulated`` tells which part of a
tenant's log the demo simulated (every page that shows it says so), ``expire_old_days`` and
``warm_rollups`` are the log's upkeep (the behaviour engine runs them on a schedule), ``close`` writes
what is buffered.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson

from aisle.analytics.log import ParquetLog
from aisle.analytics.recorder import Recorder
from aisle.analytics.records import Record
from aisle.core import analytics_layout as layout
from aisle.core.config import Settings
from aisle.core.storage import BlobStore
from aisle.core.storage.blob import BlobNotFound
from aisle.core.tenancy import tenant_scope

if TYPE_CHECKING:
    from aisle.analytics.reports import AnalyticsReports
    from aisle.experiments.model import Experiment

log = logging.getLogger("aisle.analytics")

ReportName = Literal[
    "summary",
    "daily",
    "searches",
    "no_result_queries",
    "no_click_queries",
    "follow_ups",
    "positions",
    "recommendations",
    "models",
    "rules",
]
"""The reports the analytics service answers: one method each of
:class:`~aisle.analytics.reports.AnalyticsReports`, which documents its rows."""
REPORTS: frozenset[str] = frozenset(ReportName.__args__)  # type: ignore[attr-defined]


DEMO_TRAFFIC = "demo traffic"
"""The source of the demo's simulated month (:mod:`aisle.demo.traffic_build`)."""


@dataclass(frozen=True)
class SimulatedPeriod:
    """Days of a tenant's log written by one of the demo's simulators, not by shoppers.

    Attributes:
        first, last: the first and last simulated day (UTC, inclusive).
        note: how the traffic was drawn (shown with the figures).
        source: which simulator wrote it (the demo's month of traffic, an A/B test's visitors): every
            source is named with its period wherever the figures are shown.
    """

    first: date
    last: date
    note: str
    source: str = DEMO_TRAFFIC

    def to_json(self) -> dict[str, str]:
        return {
            "source": self.source,
            "from": self.first.isoformat(),
            "to": self.last.isoformat(),
            "note": self.note,
        }

    @classmethod
    def from_json(cls, raw: dict[str, str]) -> SimulatedPeriod:
        """A period as :meth:`to_json` writes it (without ``source``: the demo traffic, as marked before
        sources were named)."""
        first, last = date.fromisoformat(raw["from"]), date.fromisoformat(raw["to"])
        return cls(first, last, raw["note"], raw.get("source", DEMO_TRAFFIC))


def simulated_span(sources: Iterable[SimulatedPeriod]) -> SimulatedPeriod | None:
    """``sources`` as one period: the first day of any to the last of any, each source named in
    ``source`` and, with its own period, in ``note``; None without sources."""
    periods = list(sources)
    if len(periods) <= 1:
        return periods[0] if periods else None
    return SimulatedPeriod(
        min(p.first for p in periods),
        max(p.last for p in periods),
        "; ".join(f"{p.source} ({p.first} to {p.last}): {p.note}" for p in periods),
        ", ".join(p.source for p in periods),
    )


class AnalyticsEngine:
    """Recording and reports over one bucket.

    Args:
        store: the bucket; log_: the Parquet log in it.
        recorder: the process's buffer (None: recording is off, ``record`` does nothing).
        window_s: the attribution window of the reports (``AISLE_ATTRIBUTION_WINDOW_SECONDS``).
        clock: the current Unix time of the reports (which days are closed, which is not over yet).
    """

    def __init__(
        self,
        store: BlobStore,
        log_: ParquetLog,
        recorder: Recorder | None,
        *,
        window_s: float = 3600.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.clock = clock
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

            self._reports = AnalyticsReports(self.log, window_s=self.window_s, clock=self.clock)
        return self._reports

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        store: BlobStore,
        *,
        record: bool = True,
        clock: Callable[[], float] = time.time,
    ) -> AnalyticsEngine:
        """The engine of one process: files fetched from a remote bucket are cached under
        ``data_dir/analytics``; ``record`` (and ``settings.analytics``) start the recorder; ``clock``
        is the reports' current time."""
        parquet = ParquetLog(store, Path(settings.data_dir) / "analytics")
        recorder = None
        if record and settings.analytics:
            parquet.warm()
            recorder = Recorder(
                parquet, flush_s=settings.analytics_flush_seconds, capacity=settings.analytics_buffer
            )
        return cls(store, parquet, recorder, window_s=settings.attribution_window_seconds, clock=clock)

    def record(self, record: Record) -> None:
        """Buffer one answer or event for the log (a no-op when recording is off); never blocks."""
        if self.recorder is not None:
            self.recorder.record(record)

    def report(self, name: ReportName, tenant: str, start: float, end: float, **options: Any) -> Any:
        """One report of ``tenant`` over ``[start, end)`` (Unix seconds): ``summary`` answers one dict of
        figures, every other report a list of row dicts (see
        :class:`~aisle.analytics.reports.AnalyticsReports` for each one's rows and ``options``: ``sort``,
        ``limit``, ``depth``).

        Raises:
            ValueError: ``name`` is not one of :data:`REPORTS`.
            StorageUnavailable: the bucket cannot be read.
        """
        if name not in REPORTS:
            raise ValueError(f"no report named {name!r}")
        return getattr(self.reports, name)(tenant, start, end, **options)

    def expire_old_days(self, tenants: Iterable[str], keep_days: int) -> list[str]:
        """Delete the day partitions of ``tenants`` older than ``keep_days`` days before today (UTC);
        returns the ``tenant/YYYY-MM-DD`` deleted. Raises StorageUnavailable (the next round retries)."""
        today = datetime.now(UTC).date()
        return [
            f"{tenant}/{day.isoformat()}"
            for tenant in tenants
            for day in self.log.expire(tenant, keep_days, today)
        ]

    def warm_rollups(self, tenants: Iterable[str]) -> int:
        """Compute the roll-up of every closed day of ``tenants`` that has answers and none yet (or a stale
        one), so no report waits for it. Returns how many days were looked at. Raises StorageUnavailable."""
        rollups = self.reports.rollups
        looked = 0
        for tenant in tenants:
            for day in self.log.days(tenant, "answers"):
                if rollups.closed(day):
                    rollups.file(tenant, day)
                    looked += 1
        return looked

    def simulated_sources(self, tenant: str) -> tuple[SimulatedPeriod, ...]:
        """Every simulated part of ``tenant``'s log, one per source, earliest first (none: ``()``)."""
        try:
            raw = orjson.loads(tenant_scope(self.store, tenant).get(layout.SIMULATED))
        except BlobNotFound:
            return ()
        periods = (SimulatedPeriod.from_json(r) for r in raw.get("sources", [raw]))
        return tuple(sorted(periods, key=lambda p: (p.first, p.last, p.source)))

    def simulated(self, tenant: str) -> SimulatedPeriod | None:
        """All that was simulated of ``tenant``'s log as one period (:func:`simulated_span`), or None
        when the demo simulated none."""
        return simulated_span(self.simulated_sources(tenant))

    def mark_simulated(self, tenant: str, period: SimulatedPeriod) -> None:
        """Say that ``period`` of ``tenant``'s log was simulated by ``period.source`` (the demo, after
        writing it); a source marked again replaces its earlier period, the other sources stay."""
        kept = [p for p in self.simulated_sources(tenant) if p.source != period.source]
        body = {"sources": [p.to_json() for p in [*kept, period]]}
        tenant_scope(self.store, tenant).put(layout.SIMULATED, orjson.dumps(body))

    def experiment_results(self, tenant: str, experiment: Experiment) -> dict[str, Any]:
        """``experiment``'s results from the log (see :mod:`aisle.analytics.experiment_results`)."""
        from aisle.analytics.experiment_results import experiment_results

        return experiment_results(self.reports, tenant, experiment)

    def close(self) -> None:
        """Write what the recorder holds (a service's shutdown: uvicorn runs it on SIGTERM)."""
        if self.recorder is not None:
            self.recorder.close()
