"""Visitor session events and user feature vectors behind the :class:`EventStore` protocol."""

from aisle.core.events.names import CART_NAMES, EventName, user_history
from aisle.core.events.resolver import open_event_store, open_event_store_url
from aisle.core.events.store import DEFAULT_CAP, DEFAULT_TTL_S, Event, EventStore, TenantEvents

__all__ = [
    "CART_NAMES",
    "DEFAULT_CAP",
    "DEFAULT_TTL_S",
    "Event",
    "EventName",
    "EventStore",
    "TenantEvents",
    "open_event_store",
    "open_event_store_url",
    "user_history",
]
