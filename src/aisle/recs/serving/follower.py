"""The predict service's change-log follower: a thread applying new product writes to every product table.

Every ``AISLE_CATALOG_FOLLOW_SECONDS`` it asks :meth:`aisle.recs.serving.tenants.TenantCache.follow` to
apply the entries written since to each tenant table the process has loaded (one GET per new entry and
one that finds none, per tenant), so a deleted product leaves the answers, and a written one joins
them, about that long after the write is acknowledged; see :mod:`aisle.recs.serving.tenants`.
"""

from __future__ import annotations

import logging
import threading

from aisle.recs.serving.tenants import TenantCache

log = logging.getLogger("aisle.predict")


class TableFollower:
    """A thread that applies new change-log entries to each loaded product table every ``every``
    seconds. A tenant whose log cannot be read keeps its table and is tried again at the next tick.

    ``every``: the pause between two rounds (``AISLE_CATALOG_FOLLOW_SECONDS``; 0: no thread, the tables
    then follow at each catalog pointer check, every second at most)."""

    def __init__(self, tenants: TenantCache, every: float) -> None:
        self.tenants = tenants
        self.every = every
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run_once(self) -> dict[str, int | None]:
        """One round: the sequence each loaded tenant's table now reflects (None: its log could not be
        read)."""
        served: dict[str, int | None] = {}
        for tenant in self.tenants.loaded():
            try:
                served[tenant] = self.tenants.follow(tenant)
            except Exception as exc:  # storage down: the table keeps what it has, tried again next tick
                log.warning("following %s's change log: %s", tenant, exc)
                served[tenant] = None
        return served

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self.run_once()

    def start(self) -> None:
        """Start following (no-op when ``every`` is 0 or the thread runs)."""
        if self.every > 0 and self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="aisle-predict-follower", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop the thread and wait for its round to end."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
