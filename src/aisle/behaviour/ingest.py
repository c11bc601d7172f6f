"""Event ingestion: visitor events into the tenant's event store, each with its analytics outbox entry
(the edit service's ``POST /events``, through :class:`~aisle.behaviour.engine.BehaviourEngine`).

An event carrying a ``userId`` is stored twice, in one batch: under its visitor, and under the visitor id
``user:<userId>`` (:func:`aisle.core.events.user_history`), the user's history across visitors and
devices. The predict engine reads that history for brand affinity when the user has no
``brand_affinity`` feature (:mod:`aisle.recs.serving.personal`). The events that models train on are read by
:mod:`aisle.recs.events` instead.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence

from aisle.core.errors import BadRequest, ErrorCode, ValidationFailed
from aisle.core.events import Event, EventName, EventStore, user_history
from aisle.core.validation import check_event_time


def require_known_types(events: Sequence[Event], allowed: Sequence[str]) -> None:
    """Refuse a batch naming an event type the tenant does not accept (its ``event_types``).

    Raises:
        ValidationFailed: ``event_type_unknown`` (400), details ``{unknown, allowed}``; nothing is stored.
    """
    unknown = sorted({e.event_type for e in events} - set(allowed))
    if unknown:
        raise ValidationFailed(
            f"unknown eventType {', '.join(unknown)}; this tenant accepts: {', '.join(allowed)}",
            code=ErrorCode.EVENT_TYPE_UNKNOWN,
            details={"unknown": unknown, "allowed": list(allowed)},
        )


def require_sane_times(events: Sequence[Event]) -> None:
    """Refuse a batch with a timestamp before 1970 or over a day past the clock (see ``check_event_time``).

    A far-future event would stay first in the visitor's recent history for ever.

    Raises:
        BadRequest: ``event_time_invalid`` (400) naming the first such event; nothing is stored.
    """
    for i, event in enumerate(events):
        try:
            check_event_time(event.timestamp)
        except ValueError as exc:
            raise BadRequest(
                f"events[{i}].timestamp {event.timestamp!r}: {exc}",
                code=ErrorCode.EVENT_TIME_INVALID,
                details={"index": i},
            ) from None


def accepted_types(tenant_types: Sequence[str]) -> list[str]:
    """The event types ``POST /events`` accepts: the tenant's own, and ``click``."""
    return [*tenant_types, *([] if EventName.CLICK in tenant_types else [str(EventName.CLICK)])]


def require_positions_with_tokens(events: Sequence[Event]) -> None:
    """A ``position`` says where the product was in an answer, so it needs that answer's token.

    Raises:
        BadRequest: ``value_invalid`` (400) naming the first event with a position and no token.
    """
    for i, event in enumerate(events):
        if event.position is not None and event.attribution_token is None:
            raise BadRequest(
                f"events[{i}].position needs the attributionToken of the answer it is a position in",
                code=ErrorCode.VALUE_INVALID,
                details={"index": i},
            )


def record_events(store: EventStore, tenant: str, events: Sequence[Event]) -> int:
    """Store visitor events; those with a ``userId`` are also kept as that user's history (one batch).

    Every event also goes to the tenant's analytics outbox, in the same atomic write
    (:meth:`~aisle.core.events.store.EventStore.append`), named by its ``event_id`` (a new one when the
    client gave none). Returns the number of events accepted (not counting the history copies).
    """
    named = [e if e.event_id else dataclasses.replace(e, event_id=uuid.uuid4().hex) for e in events]
    history = [dataclasses.replace(e, visitor_id=user_history(e.user_id)) for e in named if e.user_id]
    store.append(tenant, [*named, *history], outbox=named)
    return len(named)
