"""Stock as the catalog stores it: the ``availability`` value, per-store inventory entries, their times.

The contract (:mod:`aisle.core.stock`) names two standard product fields. The catalog accepts both in
every product write, whether or not the tenant's attribute configuration names them:

* ``availability``: one of ``IN_STOCK OUT_OF_STOCK PREORDER BACKORDER`` (any case; stored upper case),
  null for none (in stock);
* ``inventories``: ``{storeId: {"availability": ..., "quantity": int >= 0 | null} | null}``; a store id
  matches :data:`~aisle.core.stock.STORE_ID_PATTERN`. Given in a write it is *merged* store by store,
  as Google Retail's ``addLocalInventories``: each store's entry given replaces that store's (null
  removes it), the stores not given keep theirs. A whole-product ``PUT`` that gives no ``inventories``
  keeps the stored ones (a product update leaves local inventory alone).

Each store's entry has its own update time, kept among the product's update times under
:func:`store_key` (``inventories/<storeId>``: never an attribute name, which has no ``/``); a write
older than that time leaves the store's entry as it is (stale). An entry of a version imported whole
has no time of its own (0): any write replaces it.

A catalog version stores ``inventories`` as a JSON string column (:func:`encoded`), since its keys
differ per product; :func:`inventories_of` reads either form back as a dict.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

from aisle.core.stock import AVAILABILITY_FIELD, INVENTORIES_FIELD, STORE_ID_PATTERN, Availability

STORE_PREFIX = f"{INVENTORIES_FIELD}/"
"""The prefix of a store entry's key among a product's update times."""
STANDARD_FIELDS = (AVAILABILITY_FIELD, INVENTORIES_FIELD)
"""Product fields the catalog keeps for every tenant (stock), attributes or not."""
MAX_QUANTITY = 2**53
_STORE = re.compile(STORE_ID_PATTERN)
_VALUES = ", ".join(a.value for a in Availability)

Entry = dict[str, Any]
"""One store's inventory: ``{"availability": str, "quantity": int | None}``."""


class StockInvalid(ValueError):
    """A stock value that breaks the rules of the module docstring: ``field`` names it (the product API
    answers it as 422 ``product_invalid``)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"field '{field}': {problem}")
        self.field = field
        self.problem = problem


def store_key(store_id: str) -> str:
    """The key of ``store_id``'s entry among a product's update times: ``inventories/<storeId>``."""
    return STORE_PREFIX + store_id


def check_store_id(store_id: object, field: str = "storeId") -> str:
    """``store_id`` when it matches :data:`~aisle.core.stock.STORE_ID_PATTERN`.

    Raises: StockInvalid naming ``field``."""
    if not isinstance(store_id, str) or not _STORE.fullmatch(store_id):
        raise StockInvalid(field, "a store id is 1-64 letters, digits, '_', '.' or '-'")
    return store_id


def check_availability(value: object, field: str = AVAILABILITY_FIELD) -> str | None:
    """``value`` as a stored availability (upper case); None or blank stays None.

    Raises: StockInvalid naming ``field`` for anything but the four values."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    word = value.strip().upper() if isinstance(value, str) else None
    if word not in Availability.__members__:
        raise StockInvalid(field, f"must be one of {_VALUES}")
    return word


def check_quantity(value: object, field: str = "quantity") -> int | None:
    """``value`` as a quantity: a whole number, 0 to 2^53, or None. Raises: StockInvalid naming ``field``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise StockInvalid(field, "must be a whole number")
    if not 0 <= value <= MAX_QUANTITY:
        raise StockInvalid(field, "must be between 0 and 2^53")
    return int(value)


def check_entry(store_id: str, value: object, field: str | None = None) -> Entry | None:
    """One store's entry checked (``{"availability" (required), "quantity"?}``); None removes it.

    Raises: StockInvalid naming the field at fault (``inventories.<storeId>.availability``, ...)."""
    where = field if field is not None else f"{INVENTORIES_FIELD}.{store_id}"
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise StockInvalid(where, "must be an object {availability, quantity}")
    unknown = sorted(set(value) - {"availability", "quantity"})
    if unknown:
        raise StockInvalid(f"{where}.{unknown[0]}", "is not a field of a store's inventory")
    availability = check_availability(value.get("availability"), f"{where}.availability")
    if availability is None:
        raise StockInvalid(f"{where}.availability", f"is required: one of {_VALUES}")
    return {
        "availability": availability,
        "quantity": check_quantity(value.get("quantity"), f"{where}.quantity"),
    }


def check_inventories(value: object) -> dict[str, Entry | None]:
    """A product body's ``inventories`` checked: store id -> entry (None removes the store's entry).

    Raises: StockInvalid naming the field at fault."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise StockInvalid(INVENTORIES_FIELD, "must be an object {storeId: {availability, quantity}}")
    checked: dict[str, Entry | None] = {}
    for store_id, entry in value.items():
        check_store_id(store_id, f"{INVENTORIES_FIELD}.{str(store_id)[:64]}")
        checked[store_id] = check_entry(store_id, entry)
    return checked


def inventories_of(value: object) -> dict[str, Entry]:
    """A stored ``inventories`` value (a dict, the JSON string a catalog version holds, or None) as a
    dict of store id -> entry; anything unreadable is no inventory."""
    if isinstance(value, str | bytes):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return {}
    if not isinstance(value, Mapping):
        return {}
    return {str(s): dict(e) for s, e in value.items() if isinstance(e, Mapping)}


def encoded(value: object) -> str | None:
    """``inventories`` as a catalog version's JSON string column holds it (None when there is none)."""
    stores = inventories_of(value)
    return orjson.dumps(stores, option=orjson.OPT_SORT_KEYS).decode() if stores else None


def merged(stored: object, given: Mapping[str, Entry | None]) -> dict[str, Entry]:
    """``stored`` inventories with ``given``'s entries put over them store by store (None removes)."""
    stores = inventories_of(stored)
    for store_id, entry in given.items():
        if entry is None:
            stores.pop(store_id, None)
        else:
            stores[store_id] = dict(entry)
    return stores
