"""Roll-ups: a closed day's attributed answers, kept in the bucket so reports need not attribute it again.

A day D is *closed* once the day after it is over (UTC): every event that can count for an answer of D
(within :data:`~aisle.analytics.attribution.CREDIT_S`) has happened. Its roll-up is the
:func:`~aisle.analytics.attribution.attribute` table of D's answers, written once as Parquet::

    <tenant>/analytics/rollups/date=YYYY-MM-DD/<fingerprint>.parquet

The fingerprint names the exact source files it was computed from (the answer and event files of D
and D+1) and the attribution window: a file that lands late (a process's log written after an outage)
changes the fingerprint, and the next report computes the roll-up again. Two replicas computing the
same roll-up write the same bytes under the same name.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

import duckdb

from aisle.analytics.attribution import attribute
from aisle.analytics.log import ParquetLog
from aisle.core import analytics_layout as layout

VERSION = "4"
"""Bumped when the roll-up's columns or the attribution rules change (old roll-ups are then ignored)."""
LISTING_TTL_S = 30.0


def day_start(day: date) -> float:
    return datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()


class Rollups:
    """Finds or computes each closed day's roll-up.

    Args:
        log: the Parquet log (its bucket, and its cache for files of a remote bucket).
        window_s: the attribution window of conversions without a token (part of the fingerprint).
        clock: the current Unix time (tests pass a fixed one).
    """

    def __init__(self, log: ParquetLog, *, window_s: float, clock: Callable[[], float] = time.time) -> None:
        self.log = log
        self.window_s = window_s
        self._now = clock
        self._known: dict[tuple[str, date], tuple[float, str]] = {}
        self._lock = threading.Lock()
        self._computing = threading.Lock()

    def today(self) -> date:
        return datetime.fromtimestamp(self._now(), UTC).date()

    def closed(self, day: date) -> bool:
        """Whether no event can still count for an answer of ``day`` (the day after it is over)."""
        return day + timedelta(days=1) < self.today()

    def sources(self, tenant: str, day: date) -> tuple[list[str], list[str]]:
        """Local paths of the answer and event files an attribution of ``day`` reads (``day``, ``day+1``)."""
        last = day + timedelta(days=1)
        return self.log.files(tenant, "answers", day, last), self.log.files(tenant, "outcomes", day, last)

    def fingerprint(self, answers: list[str], outcomes: list[str]) -> str:
        answer_names = sorted(os.path.basename(p) for p in answers)
        outcome_names = sorted(os.path.basename(p) for p in outcomes)
        names = [*answer_names, "|", *outcome_names]
        text = "\n".join([VERSION, repr(self.window_s), *names])
        return hashlib.sha256(text.encode()).hexdigest()[:24]

    def forget(self) -> None:
        """Drop the listings reused for :data:`LISTING_TTL_S`: the next report lists the bucket again."""
        with self._lock:
            self._known.clear()

    def path(self, tenant: str, day: date, fingerprint: str) -> str:
        """The bucket path of ``day``'s roll-up computed from the sources ``fingerprint`` names."""
        return layout.rollup_file(tenant, day, fingerprint)

    def file(self, tenant: str, day: date) -> str:
        """The local path of ``day``'s roll-up (a closed day), computing and publishing it when it is
        missing or stale. Listings are reused for :data:`LISTING_TTL_S` seconds.

        Raises:
            ValueError: ``day`` is not closed yet.
            StorageUnavailable: the bucket cannot be read or written.
        """
        if not self.closed(day):
            raise ValueError(f"{day} is not closed: attribute it live")
        now = time.monotonic()
        with self._lock:
            known = self._known.get((tenant, day))
        if known is not None and now - known[0] < LISTING_TTL_S:
            return known[1]
        answers, outcomes = self.sources(tenant, day)
        path = self.path(tenant, day, self.fingerprint(answers, outcomes))
        if not self.log.store.exists(path):
            with self._computing:  # the console asks for eight reports at once: one computes, the rest wait
                if not self.log.store.exists(path):
                    self._compute(tenant, day, path, answers, outcomes)
        local = self.log.local(path)
        with self._lock:
            self._known[(tenant, day)] = (now, local)
        return local

    def _compute(self, tenant: str, day: date, path: str, answers: list[str], outcomes: list[str]) -> None:
        con = duckdb.connect()
        try:
            lo = day_start(day)
            attribute(con, answers, outcomes, lo, lo + 86400, window_s=self.window_s)
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "rollup.parquet")
                con.execute(f"COPY per_answer TO '{out}' (FORMAT parquet, COMPRESSION zstd)")
                with open(out, "rb") as f:
                    # created, never replaced: a reader holding the file must not see another computation's
                    # bytes (DuckDB reads a Parquet footer and its row groups in separate reads)
                    self.log.store.put_if_absent(path, f.read())
        finally:
            con.close()
        folder = path.rsplit("/", 1)[0]
        for stale in list(self.log.store.list(folder)):
            if stale != path:
                self.log.store.delete(stale)
