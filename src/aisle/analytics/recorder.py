"""Recording answers and outcomes without ever making a request wait.

A request hands its record to :meth:`Recorder.record`, which appends it to a bounded in-memory buffer
and returns (a lock and a list append, about a microsecond). A background thread writes the buffer to
the :class:`~aisle.analytics.log.ParquetLog` every ``flush_s`` seconds, or sooner once ``batch`` records
wait. When the buffer is full the record is dropped and counted (``dropped``, exported by the services
as a metric), never waited for. :meth:`Recorder.close` (the service's shutdown, which uvicorn runs on
SIGTERM) writes what is left. A process killed with SIGKILL loses at most the records of one flush
interval.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from aisle.analytics.log import ParquetLog
from aisle.analytics.records import Record

log = logging.getLogger("aisle.analytics")

DEFAULT_FLUSH_S = 5.0
DEFAULT_CAPACITY = 100_000
DEFAULT_BATCH = 10_000


class Recorder:
    """A bounded buffer of records, written in batches by one background thread.

    Args:
        sink: the log the batches go to (``ParquetLog.write``, or any callable taking a list).
        flush_s: seconds between writes of the buffer (the most a SIGKILL can lose).
        capacity: records held at most; past it new records are dropped and counted.
        batch: a write starts early once this many records wait.
        start: start the background thread (tests may flush by hand instead).
        on_drop: called for each record dropped (a service counts them in ``/metrics``).

    Attributes:
        recorded, dropped, written, failed: counts since start (dropped: buffer full; failed: records
            of batches the log refused, which are dropped after one retry at the next flush).
    """

    def __init__(
        self,
        sink: ParquetLog | Callable[[list[Record]], object],
        *,
        flush_s: float = DEFAULT_FLUSH_S,
        capacity: int = DEFAULT_CAPACITY,
        batch: int = DEFAULT_BATCH,
        start: bool = True,
        on_drop: Callable[[], object] | None = None,
    ) -> None:
        self._write = sink.write if isinstance(sink, ParquetLog) else sink
        self.flush_s = flush_s
        self.capacity = capacity
        self.batch = batch
        self._buffer: list[Record] = []
        self._retry: list[Record] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = threading.Event()
        self._flush_lock = threading.Lock()
        self.on_drop = on_drop
        self.recorded = self.dropped = self.written = self.failed = 0
        self._thread: threading.Thread | None = None
        if start:
            self._thread = threading.Thread(target=self._run, name="analytics-recorder", daemon=True)
            self._thread.start()

    def record(self, record: Record) -> bool:
        """Buffer one record; False (and counted in ``dropped``) when the buffer is full or closed."""
        wake = False
        with self._lock:
            full = len(self._buffer) >= self.capacity or self._closed.is_set()
            if full:
                self.dropped += 1
            else:
                self._buffer.append(record)
                self.recorded += 1
                wake = len(self._buffer) >= self.batch
        if full:
            if self.on_drop is not None:
                self.on_drop()
            return False
        if wake:
            self._wake.set()
        return True

    def pending(self) -> int:
        """Records buffered and not yet written."""
        with self._lock:
            return len(self._buffer) + len(self._retry)

    def flush(self) -> int:
        """Write everything buffered now (in the calling thread). Returns how many records were written.

        A batch the log refuses (storage down) is kept for one more attempt at the next flush, then
        dropped and counted in ``failed``: analytics never holds memory without bound.
        """
        with self._flush_lock:
            with self._lock:
                batch, self._buffer = self._buffer, []
            retry, self._retry = self._retry, []
            if not batch and not retry:
                return 0
            written = 0
            for records, second_try in ((retry, True), (batch, False)):
                if not records:
                    continue
                try:
                    self._write(records)
                except Exception as exc:
                    if second_try:
                        self.failed += len(records)
                        log.warning("analytics: %d records dropped after a second failed write", len(records))
                    else:
                        self._retry = records
                        log.warning("analytics: write failed (%s), retrying at the next flush", exc)
                    continue
                written += len(records)
            self.written += written
            return written

    def _run(self) -> None:
        while not self._closed.is_set():
            self._wake.wait(self.flush_s)
            self._wake.clear()
            try:
                self.flush()
            except Exception:  # never let the thread die: the next interval tries again
                log.exception("analytics flush failed")

    def close(self) -> None:
        """Stop the thread and write what is left (twice at most: the retry, then the rest)."""
        self._closed.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=self.flush_s + 30)
        self.flush()
        if self._retry:
            self.flush()
