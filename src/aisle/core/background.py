"""A background loop: one daemon thread calling a round of work, pausing between rounds, until stopped.

The change-log followers of the search and predict services and the catalog compactor are such loops
(:mod:`aisle.search.follower`, :mod:`aisle.recs.serving.follower`, :mod:`aisle.catalog.compaction`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable

log = logging.getLogger("aisle")


class BackgroundLoop:
    """Calls :meth:`tick` every ``every`` seconds (or after the pause the last tick returned) on a daemon
    thread, from :meth:`start` to :meth:`stop`. A tick that raises is logged and the loop goes on: a
    bug in one round never ends the thread. ``every`` 0: :meth:`start` starts nothing.

    Subclasses set :attr:`name` (the thread's) and implement :meth:`tick`."""

    name = "aisle-loop"

    def __init__(self, every: float) -> None:
        self.every = every
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def tick(self) -> float:
        """One round; returns the pause before the next, in seconds."""
        raise NotImplementedError

    def _run(self) -> None:
        pause = self.every
        while not self._stop.wait(pause):
            try:
                pause = self.tick()
            except Exception:  # the loop outlives a failed round; the next one tries again
                log.exception("%s: a round failed", self.name)
                pause = self.every

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        """Start the thread (no-op when ``every`` is 0 or it runs already)."""
        if self.every > 0 and self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop the thread, waiting for a round under way to end."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None


def follow_each(tenants: Iterable[str], follow: Callable[[str], int | None]) -> dict[str, int | None]:
    """``follow(tenant)`` for each tenant: the change-log sequence each now reflects, None where the log
    could not be read (a warning; the tenant keeps what it has and is tried again next round)."""
    served: dict[str, int | None] = {}
    for tenant in tenants:
        try:
            served[tenant] = follow(tenant)
        except Exception as exc:  # storage down: tried again at the next round
            log.warning("following %s's change log: %s", tenant, exc)
            served[tenant] = None
    return served
