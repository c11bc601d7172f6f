"""What analytics records: the answers Aisle gave (each under its attribution token) and the shopper
events that followed them, as rows with a fixed Arrow schema (the Parquet files' schema).

An *answer* is one response that showed products (a search, a recommendation list, a vector or image
search). An *outcome* is one shopper event (``click``, ``view``, ``add_to_cart``, ``purchase``) that may
name the answer it followed by its attribution token (Google Cloud Retail's ``attributionToken``,
Algolia's ``queryID``).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Literal

import pyarrow as pa

from aisle.core.events import EventName

AnswerKind = Literal["search", "recommendations", "vector", "image"]
CONVERSION_TYPES: frozenset[str] = frozenset({EventName.PURCHASE.value})
"""Event types that count as a conversion (revenue is their price x quantity)."""

TOKEN_BYTES = 18
"""Random bytes in an attribution token: 144 bits, 24 URL-safe characters (at most 128 allowed)."""


def new_attribution_token() -> str:
    """A fresh opaque attribution token: 24 URL-safe base64 characters from the OS's CSPRNG.

    Random rather than derived from the request, so a token reveals nothing of the query or shopper and
    two identical searches are two answers.
    """
    return secrets.token_urlsafe(TOKEN_BYTES)


@dataclass(frozen=True, slots=True)
class Answer:
    """One answer that showed products.

    Attributes:
        tenant, token: the tenant and the answer's attribution token (unique).
        kind: what answered (``search``, ``recommendations``, ``vector``, ``image``).
        at: when it was answered, Unix epoch seconds (UTC).
        product_ids: the products shown, in shown order (position 1 first).
        total: how many products matched (a search's ``total``; the list length otherwise).
        query: the normalised query ("" for recommendations and image search).
        filters: the request's filters as canonical JSON ("" without filters); sort: the sort order.
        stage: the retrieval stage that answered (``strict``, ``relaxed``, ``typo``, ``vector``...).
        rules: ids of the merchandising rules that fired.
        container_id, models: the recommendation container and the models of its slots.
        variant: the experiment variant that served it ("" outside experiments).
        latency_ms: the server's time to answer, milliseconds.
        visitor_id, user_id: the shopper, when the request named them.
        follow_up: the attribute a guided-search question asked about ("" when none was asked).
        follow_ups_answered: questions the request answered (its filters on askable attributes, the
            conversation's state in guided search).
    """

    tenant: str
    token: str
    kind: AnswerKind
    at: float
    product_ids: tuple[str, ...]
    total: int
    query: str = ""
    filters: str = ""
    sort: str = ""
    stage: str = ""
    rules: tuple[str, ...] = ()
    container_id: str = ""
    models: tuple[str, ...] = field(default=())
    variant: str = ""
    latency_ms: float = 0.0
    visitor_id: str | None = None
    user_id: str | None = None
    follow_up: str = ""
    follow_ups_answered: int = 0

    def row(self) -> dict[str, object]:
        return {
            "token": self.token,
            "kind": self.kind,
            "ts": self.at,
            "visitor_id": self.visitor_id,
            "user_id": self.user_id,
            "query": self.query,
            "filters": self.filters,
            "sort": self.sort,
            "product_ids": list(self.product_ids),
            "total": self.total,
            "stage": self.stage,
            "rules": list(self.rules),
            "container_id": self.container_id,
            "models": list(self.models),
            "variant": self.variant,
            "latency_ms": self.latency_ms,
            "follow_up": self.follow_up,
            "follow_ups_answered": self.follow_ups_answered,
        }


@dataclass(frozen=True, slots=True)
class Outcome:
    """One shopper event as analytics keeps it.

    Attributes:
        tenant, event_id: the tenant and the event's id (duplicates of an id count once).
        event_type: ``click``, ``view``, ``add_to_cart``, ``purchase`` (or a tenant's own type).
        at: when it happened, Unix epoch seconds (UTC).
        visitor_id, product_id: who, and which product.
        attribution_token: the answer it followed, when the client said so.
        position: the product's 1-based position in that answer, when given.
        quantity, price: for conversions; revenue is ``price * (quantity or 1)``.
    """

    tenant: str
    event_id: str
    event_type: str
    at: float
    visitor_id: str
    product_id: str
    attribution_token: str | None = None
    position: int | None = None
    quantity: float | None = None
    price: float | None = None
    user_id: str | None = None

    def row(self) -> dict[str, object]:
        return {
            "event_id": self.event_id,
            "event_type": self.event_type,
            "ts": self.at,
            "visitor_id": self.visitor_id,
            "user_id": self.user_id,
            "product_id": self.product_id,
            "attribution_token": self.attribution_token,
            "position": self.position,
            "quantity": self.quantity,
            "price": self.price,
        }


ANSWER_SCHEMA = pa.schema(
    [
        ("token", pa.string()),
        ("kind", pa.string()),
        ("ts", pa.float64()),
        ("visitor_id", pa.string()),
        ("user_id", pa.string()),
        ("query", pa.string()),
        ("filters", pa.string()),
        ("sort", pa.string()),
        ("product_ids", pa.list_(pa.string())),
        ("total", pa.int64()),
        ("stage", pa.string()),
        ("rules", pa.list_(pa.string())),
        ("container_id", pa.string()),
        ("models", pa.list_(pa.string())),
        ("variant", pa.string()),
        ("latency_ms", pa.float64()),
        ("follow_up", pa.string()),
        ("follow_ups_answered", pa.int64()),
    ]
)

LATE_ANSWER_COLUMNS = {"follow_up": "''", "follow_ups_answered": "0"}
"""Answer columns added after the first logs were written, with the SQL value a row of an older file
takes (guided search's, issue 33)."""

OUTCOME_SCHEMA = pa.schema(
    [
        ("event_id", pa.string()),
        ("event_type", pa.string()),
        ("ts", pa.float64()),
        ("visitor_id", pa.string()),
        ("user_id", pa.string()),
        ("product_id", pa.string()),
        ("attribution_token", pa.string()),
        ("position", pa.int64()),
        ("quantity", pa.float64()),
        ("price", pa.float64()),
    ]
)

Record = Answer | Outcome
TABLES: dict[type, tuple[str, pa.Schema]] = {
    Answer: ("answers", ANSWER_SCHEMA),
    Outcome: ("outcomes", OUTCOME_SCHEMA),
}
"""Each record type's table name (its folder in the bucket) and Arrow schema."""
