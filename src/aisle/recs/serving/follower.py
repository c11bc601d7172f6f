"""The predict service's change-log follower: a thread applying new product writes to every product table.

Every ``AISLE_CATALOG_FOLLOW_SECONDS`` it asks :meth:`aisle.recs.serving.tenants.TenantCache.follow` to
apply the entries written since to each tenant table the process has loaded (one GET per new entry and
one that finds none, per tenant), so a deleted product leaves the answers, and a written one joins
them, about that long after the write is acknowledged; see :mod:`aisle.recs.serving.tenants`.
"""

from __future__ import annotations

import logging

from aisle.core.background import BackgroundLoop, follow_each
from aisle.recs.serving.tenants import TenantCache

log = logging.getLogger("aisle.predict")


class TableFollower(BackgroundLoop):
    """A thread that applies new change-log entries to each loaded product table every ``every``
    seconds. A tenant whose log cannot be read keeps its table and is tried again at the next tick.

    ``every``: the pause between two rounds (``AISLE_CATALOG_FOLLOW_SECONDS``; 0: no thread, the tables
    then follow at each catalog pointer check, every second at most)."""

    name = "aisle-predict-follower"

    def __init__(self, tenants: TenantCache, every: float) -> None:
        super().__init__(every)
        self.tenants = tenants

    def run_once(self) -> dict[str, int | None]:
        """One round: the sequence each loaded tenant's table now reflects (None: its log could not be
        read)."""
        return follow_each(self.tenants.loaded(), self.tenants.follow)

    def tick(self) -> float:
        self.run_once()
        return self.every
