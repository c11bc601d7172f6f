"""Bodies of the storefront's API (``/shop/session``, ``/shop/events``; see :mod:`.shop`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from aisle.core.validation import ATTRIBUTION_TOKEN_PATTERN, ExternalId

SHOP_EVENT_TYPES = ("click", "add_to_cart", "purchase")
MAX_SHOP_EVENTS = 50


class ShopSession(BaseModel):
    """What a storefront page needs to talk to Aisle for one tenant."""

    tenant: str = Field(examples=["fashion"])
    token: str | None = Field(
        description="A read-only access token (search:read recs:read) for this tenant only, to send as "
        "`Authorization: Bearer`; null when auth is off."
    )
    expiresIn: int | None = Field(description="Seconds the token lives; null when auth is off.")
    scopes: list[str] = Field(description="The token's scopes.", examples=[["search:read", "recs:read"]])
    eventsPath: str = Field(
        default="/shop/events", description="Where the page sends shopper events (this service's relay)."
    )


class ShopEvent(BaseModel):
    """A shopper event of a storefront page: the edit service's event, limited to what a page reports."""

    model_config = ConfigDict(extra="forbid")

    visitorId: ExternalId
    eventType: Literal["click", "add_to_cart", "purchase"]
    productId: ExternalId
    timestamp: float = Field(
        ge=0, le=4_102_444_800, description="Unix epoch seconds (the edit service checks it is not future)."
    )
    eventId: ExternalId | None = Field(default=None, description="Sent again with the same id, counts once.")
    attributionToken: str | None = Field(
        default=None,
        pattern=ATTRIBUTION_TOKEN_PATTERN,
        description="The answer's attributionToken (InstantSearch's queryID).",
    )
    position: Annotated[int, Field(ge=1, le=1000)] | None = Field(
        default=None, description="The product's 1-based position in that answer."
    )
    quantity: Annotated[float, Field(ge=0, le=1e6)] | None = None
    price: Annotated[float, Field(ge=0, le=1e9)] | None = None


class ShopEvents(BaseModel):
    """Body of ``POST /shop/events``."""

    model_config = ConfigDict(extra="forbid")

    events: Annotated[list[ShopEvent], Field(min_length=1, max_length=MAX_SHOP_EVENTS)]


class ShopEventsAccepted(BaseModel):
    accepted: int = Field(description="Events the edit service stored.")
