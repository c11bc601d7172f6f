"""Personalisation of a predict request: the visitor's session and purchases, the user's brand affinity.

Switched per tenant by ``user_group_configuration.json`` ``personalization``: ``enabled``,
``session_events`` (how many recent events of ``visitorId`` make the session) and
``brand_affinity_weight`` (how far affinity moves a score, in units of the slot's normalised range;
see :mod:`aisle.recs.serving.rank`). Brand affinity of ``userId`` comes from its ``brand_affinity``
(or ``brands``) feature, else from the brands of its history (:func:`aisle.core.events.user_history`),
counted; either way scaled so the largest magnitude is 1.

While the event store is unreachable, a request is answered without personalisation rather than failed:
:meth:`Personaliser.personal` returns an empty :class:`Personal` whose ``degraded`` names the reason
(``event_store_unavailable``), which the predict service reports in its ``Aisle-Degraded`` header. After
a failure the store is left alone for :attr:`Personaliser.pause_s` seconds, so an unreachable Redis
costs one connect timeout per pause, not one per request; it is tried again after that.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

from aisle.core.errors import ErrorCode, EventStoreUnavailable
from aisle.core.events import EventStore, user_history
from aisle.core.tenancy import TenantConfig
from aisle.recs.serving.products import ProductTable

PURCHASE_TYPES = frozenset({"purchase", "transaction", "order"})

log = logging.getLogger("aisle.predict")


@dataclass(frozen=True)
class Personal:
    """What the request knows about the visitor: recent product ids (oldest first), purchased ids,
    and brand affinities in [-1, 1]. ``degraded``: the error code of the backend that kept the request
    from being personalised (``event_store_unavailable``), None when nothing was skipped."""

    session: tuple[str, ...] = ()
    purchased: frozenset[str] = frozenset()
    brand_affinity: dict[str, float] = field(default_factory=dict)
    affinity_weight: float = 0.0
    degraded: str | None = None


class Personaliser:
    """Reads visitor events and user features from ``events`` (one per predict engine; thread-safe).

    Args:
        events: the event store.
        pause_s: seconds the store is not asked again after it failed (see the module docstring).
    """

    def __init__(self, events: EventStore, pause_s: float = 1.0) -> None:
        self.events = events
        self.pause_s = pause_s
        self._paused_until = 0.0
        self._lock = threading.Lock()

    def personal(
        self,
        tenant: str,
        config: TenantConfig,
        table: ProductTable,
        visitor_id: str | None,
        user_id: str | None,
    ) -> Personal:
        """Session and purchases of ``visitor_id``, brand affinity of ``user_id`` (features, else history).

        Empty when the tenant's personalisation is off or neither id is given (no I/O then), and empty
        with ``degraded`` set while the event store is unreachable (never raises for that).
        """
        p = config.user_groups.personalization
        if not p.enabled or not (visitor_id or user_id):
            return Personal()
        if time.monotonic() < self._paused_until:
            return Personal(degraded=str(ErrorCode.EVENT_STORE_UNAVAILABLE))
        session: tuple[str, ...] = ()
        purchased: frozenset[str] = frozenset()
        affinity: dict[str, float] = {}
        try:
            if visitor_id and p.session_events > 0:
                recent = self.events.recent(tenant, visitor_id, limit=p.session_events)
                session = tuple(e.product_id for e in reversed(recent))
                purchased = frozenset(e.product_id for e in recent if e.event_type in PURCHASE_TYPES)
            if user_id and p.brand_affinity_weight > 0:
                affinity = self.brand_affinity(tenant, user_id, table)
        except EventStoreUnavailable as exc:
            with self._lock:
                self._paused_until = time.monotonic() + self.pause_s
            log.warning("predict without personalisation for %.1f s: %s", self.pause_s, exc.message)
            return Personal(degraded=str(exc.code))
        return Personal(session, purchased, affinity, p.brand_affinity_weight)

    def brand_affinity(self, tenant: str, user_id: str, table: ProductTable) -> dict[str, float]:
        """Brand -> affinity in [-1, 1] of ``user_id``; empty when nothing is known."""
        raw: dict[str, float] = {}
        features = self.events.user_features(tenant, user_id) or {}
        given = features.get("brand_affinity") or features.get("brands")
        if isinstance(given, dict):
            raw = {str(k): float(v) for k, v in given.items() if isinstance(v, int | float)}
        else:
            for e in self.events.recent(tenant, user_history(user_id)):
                row = table.row(e.product_id)
                brand = None if row is None else table.brand(row)
                if brand:
                    raw[str(brand)] = raw.get(str(brand), 0.0) + 1.0
        top = max((abs(v) for v in raw.values()), default=0.0)
        return {k: v / top for k, v in raw.items()} if top > 0 else {}
