"""The shopper-behaviour engine's front door: what shoppers did, from the event they send to the ranker
that learns from it.

One :class:`BehaviourEngine` per process that needs it. A click takes one line through it:

1. **ingestion** (the edit service's ``POST /events``): :meth:`BehaviourEngine.record_events` validates a
   batch (one :class:`~aisle.core.events.Event` type, one spelling of each name in
   :class:`~aisle.core.events.EventName`) and stores it with its outbox entries in one atomic write
   (:mod:`aisle.behaviour.ingest`);
2. **the outbox drain** (the analytics service): :meth:`BehaviourEngine.start_delivery` moves every
   tenant's outbox into the analytics log every ``AISLE_ANALYTICS_FLUSH_SECONDS``
   (:mod:`aisle.behaviour.outbox`) and runs the log's upkeep (closed days rolled up, old days expired:
   :class:`~aisle.analytics.engine.AnalyticsEngine`);
3. **the behaviour tables, propensities and popularity** computed from the log
   (:mod:`aisle.behaviour.tables`, :mod:`aisle.behaviour.propensity`, :mod:`aisle.behaviour.store`,
   :mod:`aisle.behaviour.popularity`);
4. **ranker trials** and their decision rules (:mod:`aisle.behaviour.rankers`,
   :mod:`aisle.behaviour.trials`), run as jobs of the edit service's job runner
   (:meth:`BehaviourEngine.job_handlers`).

Every path it reads or writes in the bucket is named in :mod:`aisle.core.analytics_layout`. It sits above
the engines it orchestrates (search training, recs jobs, analytics, experiments) and below the services,
which only relay to it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import ClassVar

from aisle.analytics.engine import AnalyticsEngine
from aisle.behaviour import ingest
from aisle.behaviour.outbox import drain
from aisle.behaviour.popularity import REFRESH_POPULARITY, refresh_popularity_handler
from aisle.behaviour.rankers import TRAIN_RANKER, click_log, train_ranker_handler
from aisle.behaviour.store import BehaviourRecord, refresh
from aisle.behaviour.trials import DEFAULT_MDE
from aisle.core.config import Settings
from aisle.core.events import Event, EventStore
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.recs.jobs import JobHandler
from aisle.search.training.clicks import ClickLog

log = logging.getLogger("aisle.analytics")
UPKEEP_FIRST_S = 60.0
"""Seconds after start-up before the first upkeep round: the service answers first, then tidies."""
UPKEEP_EVERY_S = 600.0
"""Seconds between two rounds of upkeep: closed days' roll-ups computed, old days deleted (daily)."""


class BehaviourEngine:
    """Shopper behaviour over one bucket and one event store.

    Args:
        settings: process settings (``data_dir`` caches log files; ``analytics_flush_seconds`` paces
            the drain; ``analytics_retention_days`` is the log's retention).
        store: the bucket.
        events: the event store (visitor events and the analytics outbox).
        analytics: the analytics front door the drain writes through (default: one that records nothing,
            over ``store``).
    """

    TRAIN_RANKER: ClassVar[str] = TRAIN_RANKER
    """The job kind that trains a tenant's search ranker from its shoppers' clicks."""
    REFRESH_POPULARITY: ClassVar[str] = REFRESH_POPULARITY
    """The job kind that recomputes a tenant's product popularity and trending from its events."""
    DEFAULT_MDE: ClassVar[float] = DEFAULT_MDE
    """Relative click-through lift a ranker trial is sized to detect by default."""

    def __init__(
        self,
        settings: Settings,
        store: BlobStore,
        events: EventStore,
        *,
        analytics: AnalyticsEngine | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.events = events
        self.tenants = Tenants(store)
        self.analytics = analytics or AnalyticsEngine.from_settings(settings, store, record=False)
        # one drain at a time, and none once the store is closed: a drain already running in its thread
        # is not stopped by stopping the rounds, and closing the store's connections under it crashed
        # the process (sqlite, a segmentation fault at shutdown)
        self._draining = threading.Lock()
        self._stop = threading.Event()
        self._delivery: threading.Thread | None = None

    # ---- ingestion ---------------------------------------------------------------------------
    def event_types(self, tenant: str) -> list[str]:
        """The event types ``tenant`` accepts: its ``event_types`` and ``click``.
        Raises TenantNotFound (404)."""
        return ingest.accepted_types(list(self.tenants.config(tenant).global_.event_types))

    def record_events(self, tenant: str, events: Sequence[Event]) -> int:
        """Store ``events`` (all or none) with their outbox entries; returns how many were accepted.

        Raises:
            TenantNotFound: 404.
            ValidationFailed: ``event_type_unknown`` (400), a type the tenant does not accept.
            BadRequest: ``event_time_invalid`` (400) or a position without its answer's token (400).
            EventStoreUnavailable: 503.
        """
        ingest.require_known_types(events, self.event_types(tenant))
        ingest.require_sane_times(events)
        ingest.require_positions_with_tokens(events)
        return ingest.record_events(self.events, tenant, events)

    # ---- the outbox drain and the log's upkeep -----------------------------------------------
    def drain(self) -> int:
        """Move every tenant's event outbox into the analytics log (:func:`aisle.behaviour.outbox.drain`);
        returns the events moved. Raises EventStoreUnavailable or StorageUnavailable (entries not yet
        written stay in the outbox)."""
        with self._draining:
            return self._drain_all()

    def _drain_all(self) -> int:
        return sum(drain(self.events, self.analytics.log, t) for t in self.events.outbox_tenants())

    def upkeep(self, expire: bool) -> None:
        """One round of the log's upkeep: old days expired first when ``expire``, then every closed day
        rolled up (:meth:`~aisle.analytics.engine.AnalyticsEngine.warm_rollups`). Raises
        StorageUnavailable."""
        if expire:
            gone = self.analytics.expire_old_days(
                self.tenants.names(), self.settings.analytics_retention_days
            )
            if gone:
                log.info("analytics retention deleted %d day partitions", len(gone))
        self.analytics.warm_rollups(self.tenants.names())

    def start_delivery(self) -> None:
        """Start the background rounds: the outbox drained every ``analytics_flush_seconds`` (the first
        at once), and from :data:`UPKEEP_FIRST_S` on, every :data:`UPKEEP_EVERY_S`, the log's upkeep
        (old days expired once a UTC day). A failed round is logged and the next one tries again."""
        self._stop.clear()
        self._delivery = threading.Thread(target=self._deliver, name="behaviour-drain", daemon=True)
        self._delivery.start()
        # a roll-up being computed when the service stops is left to finish on its own (daemon)
        threading.Thread(target=self._tidy, name="analytics-upkeep", daemon=True).start()

    def stop_delivery(self) -> None:
        """Stop the rounds, deliver what waits in the outbox (a SIGTERM), then close the event store."""
        self._stop.set()
        if self._delivery is not None:
            self._delivery.join()
        with self._draining:
            try:
                self._drain_all()
            finally:
                self.events.close()

    def _deliver(self) -> None:
        while True:
            try:
                self.drain()
            except Exception:  # the event store or the bucket is down: the next round tries again
                log.exception("analytics: draining the event outbox failed")
            if self._stop.wait(self.settings.analytics_flush_seconds):
                return

    def _tidy(self) -> None:
        expired_on = None
        if self._stop.wait(UPKEEP_FIRST_S):
            return
        while True:
            try:
                today = datetime.now(UTC).date()
                self.upkeep(expire=expired_on != today)
                expired_on = today
            except Exception:  # storage down: the next round tries again
                log.exception("analytics upkeep failed")
            if self._stop.wait(UPKEEP_EVERY_S):
                return

    # ---- behaviour tables and the jobs that learn from them ----------------------------------
    def refresh(self, tenant: str, now: float | None = None) -> BehaviourRecord:
        """Compute ``tenant``'s behaviour tables over the log's last 90 days before ``now`` (default: the
        clock) and publish them as the next version (:func:`aisle.behaviour.store.refresh`)."""
        return refresh(self.analytics.log, tenant, now)

    def click_log(self, tenant: str, version: int) -> ClickLog:
        """The ranker trainer's input from behaviour ``version`` of ``tenant``
        (:func:`aisle.behaviour.rankers.click_log`)."""
        return click_log(self.store, tenant, version)

    def job_handlers(self) -> dict[str, JobHandler]:
        """The edit service's job kinds that learn from behaviour: ``train_ranker`` and
        ``refresh_popularity`` (handed to :class:`~aisle.recs.editing.RecsEditor`'s job runner)."""
        return {
            TRAIN_RANKER: train_ranker_handler(self.settings, self.store),
            REFRESH_POPULARITY: refresh_popularity_handler(self.settings, self.store),
        }
