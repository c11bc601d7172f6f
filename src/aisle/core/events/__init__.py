"""Visitor session events and user feature vectors behind the :class:`EventStore` protocol."""

from aisle.core.events.resolver import open_event_store, open_event_store_url
from aisle.core.events.store import DEFAULT_CAP, DEFAULT_TTL_S, Event, EventStore, TenantEvents

__all__ = [
    "DEFAULT_CAP",
    "DEFAULT_TTL_S",
    "Event",
    "EventStore",
    "TenantEvents",
    "open_event_store",
    "open_event_store_url",
]
