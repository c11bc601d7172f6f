"""The shopper event types Aisle itself reads, each spelled once, and where a user's history is kept.

A tenant names its own event types (``global_configuration.json`` ``event_types``); these are the ones
the engines give a meaning to: analytics counts clicks and conversions, the behaviour tables count
clicks, carts and purchases, popularity weighs views, carts and purchases. Every module that tests an
event's type compares it with an :class:`EventName` (SQL included: ``f"... = '{EventName.CLICK}'"``), so
the name is typed once, here.
"""

from __future__ import annotations

from enum import StrEnum


class EventName(StrEnum):
    """An event type with a meaning to Aisle (a ``str``: compares equal to the name a client sends)."""

    CLICK = "click"
    """A shopper clicked a product of an answer; accepted by every tenant besides its own types."""
    VIEW = "view"
    ADD_TO_CART = "add_to_cart"
    PURCHASE = "purchase"
    """The conversion: revenue is its ``price * (quantity or 1)``."""


CART_NAMES: tuple[str, ...] = (EventName.ADD_TO_CART.value, "add-to-cart", "cart")
"""The spellings tenants use for a cart event (their own ``event_types``), all read as one."""
USER_HISTORY_PREFIX = "user:"
"""Events carrying a ``userId`` are also kept under visitor ``user:<userId>`` (the user's history)."""


def user_history(user_id: str) -> str:
    """The visitor id under which the events of ``user_id`` are kept: ``user:<userId>``."""
    return USER_HISTORY_PREFIX + user_id
