"""The EventStore protocol: recent visitor events and user feature vectors, per tenant.

Events are kept as a capped, expiring list per (tenant, visitor): the newest ``cap`` events of the
last ``ttl`` seconds (counted from when the store received them). "Newest" means most recently
received; the event's own ``timestamp`` is stored and returned but does not reorder the list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

import orjson

DEFAULT_CAP = 200
"""Events kept per visitor (the session models read at most the last 50 by default)."""
DEFAULT_TTL_S = 7 * 24 * 3600
"""Seconds a visitor's events live after the last write (one week)."""


@dataclass(frozen=True, slots=True)
class Event:
    """One visitor session event.

    Attributes:
        visitor_id: anonymous visitor (cookie) id.
        event_type: one of the tenant's ``global_configuration.event_types``.
        product_id: the product's catalog id (a string).
        timestamp: when it happened, Unix epoch seconds (UTC).
        user_id, session_id: optional known-user and session ids.
        quantity, price: optional, for cart and purchase events (price in the catalog currency).
        event_id: the event's id (duplicates of an id count once in analytics).
        attribution_token: the answer (search or recommendations) the event followed, when known.
        position: the product's 1-based position in that answer.
    """

    visitor_id: str
    event_type: str
    product_id: str
    timestamp: float
    user_id: str | None = None
    session_id: str | None = None
    quantity: float | None = None
    price: float | None = None
    event_id: str | None = None
    attribution_token: str | None = None
    position: int | None = None

    def to_json(self) -> bytes:
        return orjson.dumps({k: v for k, v in asdict(self).items() if v is not None})

    @classmethod
    def from_json(cls, raw: bytes | str) -> Event:
        return cls(**orjson.loads(raw))


@runtime_checkable
class EventStore(Protocol):
    """Storage of recent events and user features. Implementations are safe to share across threads.

    Keys are built by the implementation from ``tenant`` and the id; call sites never build them.
    """

    cap: int
    ttl_s: int

    def append(self, tenant: str, events: Sequence[Event], *, outbox: Sequence[Event] = ()) -> int:
        """Store events (one batch, one round trip where the backend allows). Returns how many.

        ``outbox`` events are also added to the tenant's outbox in the same atomic write (the
        transactional outbox pattern): once ``append`` returns they are durable as far as the store
        is, and :meth:`outbox` hands them on until :meth:`outbox_done` says they were delivered.
        """
        ...

    def outbox(self, tenant: str, limit: int) -> list[tuple[str, Event]]:
        """The oldest ``limit`` undelivered outbox entries of ``tenant``: ``(entry id, event)``."""
        ...

    def outbox_done(self, tenant: str, entry_ids: Sequence[str]) -> None:
        """Remove delivered outbox entries (unknown ids are ignored)."""
        ...

    def outbox_tenants(self) -> list[str]:
        """The tenants whose outbox holds entries (a drainer visits only these)."""
        ...

    def recent(self, tenant: str, visitor_id: str, limit: int | None = None) -> list[Event]:
        """The visitor's events, newest first, at most ``min(limit, cap)``; ``[]`` for an unknown visitor."""
        ...

    def put_user_features(self, tenant: str, user_id: str, features: dict[str, Any]) -> None:
        """Replace a user's feature vector (a JSON object, e.g. ``{"brand_affinity": {"Nike": 0.8}}``)."""
        ...

    def user_features(self, tenant: str, user_id: str) -> dict[str, Any] | None:
        """The user's feature vector, or None when never stored."""
        ...

    def clear(self, tenant: str) -> None:
        """Forget every event and feature vector of ``tenant`` (tests, tenant deletion)."""
        ...

    def close(self) -> None: ...


class TenantEvents:
    """An :class:`EventStore` bound to one tenant, so service code never passes the tenant around."""

    def __init__(self, store: EventStore, tenant: str) -> None:
        self.store = store
        self.tenant = tenant

    def append(self, events: Sequence[Event]) -> int:
        return self.store.append(self.tenant, events)

    def recent(self, visitor_id: str, limit: int | None = None) -> list[Event]:
        return self.store.recent(self.tenant, visitor_id, limit)

    def put_user_features(self, user_id: str, features: dict[str, Any]) -> None:
        self.store.put_user_features(self.tenant, user_id, features)

    def user_features(self, user_id: str) -> dict[str, Any] | None:
        return self.store.user_features(self.tenant, user_id)
