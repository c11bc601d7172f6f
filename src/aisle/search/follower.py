"""The search service's change-log follower: a thread applying new product writes to every open index.

Every ``AISLE_CATALOG_FOLLOW_SECONDS`` it asks :meth:`aisle.search.indexes.IndexRegistry.follow` to apply
the entries written since to each tenant index the process has open; see :mod:`aisle.search.indexes`.
"""

from __future__ import annotations

import logging

from aisle.core.background import BackgroundLoop, follow_each
from aisle.search.indexes import IndexRegistry

log = logging.getLogger("aisle.search")


class LogFollower(BackgroundLoop):
    """A thread that applies new change-log entries to each open index every ``every`` seconds
    (:meth:`IndexRegistry.follow`). A tenant whose log cannot be read is tried again at the next tick.

    ``every``: the pause between two rounds (``AISLE_CATALOG_FOLLOW_SECONDS``; 0: no thread);
    ``busy_every``: the pause after a round that applied entries (``AISLE_CATALOG_BUSY_FOLLOW_SECONDS``),
    so a stream of writes is applied in fewer, larger commits while a lone write is still found within
    ``every``."""

    name = "aisle-log-follower"

    def __init__(self, registry: IndexRegistry, every: float, busy_every: float | None = None) -> None:
        super().__init__(every)
        self.registry = registry
        self.busy_every = max(every, busy_every if busy_every is not None else every)
        self._served: dict[str, int | None] = {}

    def run_once(self) -> dict[str, int | None]:
        """One round: the sequence each open tenant now serves (None: its log could not be read)."""
        served = follow_each(self.registry.loaded(), self.registry.follow)
        for tenant in (t for t, seq in served.items() if seq is not None):
            try:  # the catalog check, when due: a version compacted during writes is built once they
                self.registry.get(tenant)  # settle, whether or not a search comes to ask for it
            except Exception as exc:  # a search meets it too, with its status
                log.debug("checking %s's catalog: %s", tenant, exc)
        return served

    def pause_after(self, served: dict[str, int | None]) -> float:
        """The pause after a round that served ``served`` (:meth:`run_once`): ``busy_every`` when some
        tenant's sequence moved since the round before, else ``every``."""
        applied = any(seq is not None and seq != self._served.get(t) for t, seq in served.items())
        self._served = served
        return self.busy_every if applied else self.every

    def tick(self) -> float:
        return self.pause_after(self.run_once())

    def start(self) -> None:
        """Start following (and remove the copies that processes gone from this host left)."""
        if self.every > 0 and not self.running:
            self.registry.remove_dead_copies()
        super().start()
