"""Stock: the standard ``availability`` attribute, per-store inventory, and a tenant's out-of-stock policy.

A product's availability is one of :class:`Availability` (the values of Google Cloud Retail's
``Product.availability``), in the product field :data:`AVAILABILITY_FIELD`. A product without one is in
stock (a catalog that says nothing about stock sells everything it lists).

Per-store inventory lives in the product field :data:`INVENTORIES_FIELD`: a JSON object
``{storeId: {"availability": ..., "quantity": int | null}}`` written by
``PUT /products/{id}/inventory/{storeId}`` (as Google's ``addLocalInventories``: each store's entry
merged by its own update time). A request that names a ``storeId`` judges a product by that store's
entry only: a product the store does not list is out of stock there.

The tenant's policy (``global_configuration.json``, ``stock``)::

    {"stock": {"policy": "bury", "store": "filter"}}

* ``policy``: what search and recommendations do with a product out of stock: ``show`` it as any other
  (the default: nothing changes for a tenant that never set it), ``bury`` it (after every product in
  stock, each group in its own order), or ``hide`` it.
* ``store``: what a request's ``storeId`` does: ``filter`` (only what that store has, whatever the policy)
  or ``boost`` (that store's products first, the rest after, the policy applying to both).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

AVAILABILITY_FIELD = "availability"
"""The standard attribute holding a product's :class:`Availability`."""
INVENTORIES_FIELD = "inventories"
"""The product field holding per-store inventory: ``{storeId: {"availability", "quantity"}}``."""
STORE_ID_PATTERN = r"^[A-Za-z0-9_.-]{1,64}$"
"""What a store id may be (a path segment and a keyword term)."""


class Availability(str, Enum):
    """A product's availability, as Google Cloud Retail's ``Product.availability``."""

    IN_STOCK = "IN_STOCK"
    OUT_OF_STOCK = "OUT_OF_STOCK"
    PREORDER = "PREORDER"
    BACKORDER = "BACKORDER"


SELLABLE = frozenset({Availability.IN_STOCK.value, Availability.PREORDER.value, Availability.BACKORDER.value})
"""Availabilities a shopper can buy now or order: everything but ``OUT_OF_STOCK``."""


class StockPolicy(str, Enum):
    """What search and recommendations do with a product out of stock."""

    show = "show"
    bury = "bury"
    hide = "hide"


class StockConfig(BaseModel):
    """``global_configuration.json``'s ``stock`` (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    policy: StockPolicy = StockPolicy.show
    store: Literal["filter", "boost"] = "filter"


def in_stock(fields: Mapping[str, Any], store_id: str | None = None) -> bool:
    """Whether a product (its stored fields) is sellable: its :data:`AVAILABILITY_FIELD` is in
    :data:`SELLABLE` or absent; with ``store_id``, that store's entry in :data:`INVENTORIES_FIELD`
    decides instead (no entry: not in stock there)."""
    if store_id is None:
        value = fields.get(AVAILABILITY_FIELD)
        return value is None or value in SELLABLE
    stores = fields.get(INVENTORIES_FIELD)
    entry = stores.get(store_id) if isinstance(stores, Mapping) else None
    return isinstance(entry, Mapping) and entry.get("availability") in SELLABLE


def stores_in_stock(fields: Mapping[str, Any]) -> list[str]:
    """The store ids whose inventory entry says the product is sellable there, sorted (what a search
    index keeps as a keyword list, so a ``storeId`` filter is a term query)."""
    stores = fields.get(INVENTORIES_FIELD)
    if not isinstance(stores, Mapping):
        return []
    return sorted(
        s for s, e in stores.items() if isinstance(e, Mapping) and e.get("availability") in SELLABLE
    )
