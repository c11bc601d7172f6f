"""Shopper events into the analytics log, at least once: the event store's outbox, drained to Parquet.

``POST /events`` stores each event and, in the same atomic write, an outbox entry
(:meth:`~aisle.core.events.store.EventStore.append` with ``outbox=``), so an acknowledged event is
durable before its 202. :func:`drain` reads the oldest entries, writes them to the log as one file per
day, and only then removes them from the outbox: a crash between the two writes them again at the next
drain, and the reports count an event id once (:mod:`aisle.analytics.attribution`).
:meth:`aisle.behaviour.engine.BehaviourEngine.drain` drains every tenant's outbox.
"""

from __future__ import annotations

from aisle.analytics.log import ParquetLog
from aisle.analytics.records import Outcome
from aisle.core.events import Event, EventStore

DRAIN_BATCH = 10_000


def outcome_of(tenant: str, entry_id: str, event: Event) -> Outcome:
    """The analytics row of one stored event (an event without an id is named by its outbox entry)."""
    return Outcome(
        tenant=tenant,
        event_id=event.event_id or f"outbox-{entry_id}",
        event_type=event.event_type,
        at=event.timestamp,
        visitor_id=event.visitor_id,
        product_id=event.product_id,
        attribution_token=event.attribution_token,
        position=event.position,
        quantity=event.quantity,
        price=event.price,
        user_id=event.user_id,
    )


def drain(events: EventStore, log: ParquetLog, tenant: str, *, batch: int = DRAIN_BATCH) -> int:
    """Move ``tenant``'s outbox into the log, ``batch`` entries at a time, until it is empty.

    Returns the number of events written. Raises what the store or the bucket raises
    (``EventStoreUnavailable``, ``StorageUnavailable``): entries not yet written stay in the outbox.
    """
    moved = 0
    while True:
        entries = events.outbox(tenant, batch)
        if not entries:
            return moved
        log.write([outcome_of(tenant, entry_id, event) for entry_id, event in entries])
        events.outbox_done(tenant, [entry_id for entry_id, _ in entries])
        moved += len(entries)
        if len(entries) < batch:
            return moved
