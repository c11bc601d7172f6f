"""One product as the product API writes it: its fields checked against the tenant's attributes.

A product is a JSON object keyed by attribute name (``attribute_configuration.json``), the shape
``GET /item/{id}`` answers; the import maps source columns to the same names
(:func:`aisle.catalog.schema.map_catalog`), and a value is read by the import's rules:

* ``text``, ``keyword``, ``category_path``: a string (a number or boolean is written as text, a list of
  strings for a ``category_path`` is joined top level first with ``" > "``); blank is null; HTML is
  stripped from an ``html`` attribute;
* ``number``, ``integer``: a JSON number or a numeric string, finite and within +-2^53; an integer is
  whole; a ``price`` is not negative;
* ``boolean``: true/false, or ``"true" "1" "yes" "false" "0" "no"``.

A field the configuration does not name is ignored, as the import ignores a column it does not map (the
write reports it), except the standard stock fields ``availability`` and ``inventories``, kept for every
tenant and checked by :mod:`aisle.catalog.stock_fields` (a configured ``availability`` attribute is
checked by the same rule: one of the four values). ``id`` in a body must be the path's. A value that
breaks a rule raises :class:`ProductInvalid` (422 ``product_invalid``) naming the field: the whole
operation is refused.

``updateTime`` (RFC 3339, with an offset) orders writes; :func:`parse_update_time` reads it as integer
microseconds since the Unix epoch, at most a day past the server's clock
(:data:`aisle.core.validation.MAX_FUTURE_S`); one that cannot be read is 400 ``update_time_invalid``.
"""

from __future__ import annotations

import html
import math
import re
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from aisle.catalog.schema import PATH_SEP
from aisle.catalog.stock_fields import STANDARD_FIELDS, StockInvalid, check_availability, check_inventories
from aisle.core.errors import AisleError, ErrorCode
from aisle.core.stock import INVENTORIES_FIELD
from aisle.core.tenant_config import Attribute, AttributeConfiguration, AttributeRole, AttributeType
from aisle.core.validation import EXTERNAL_ID_PATTERN, MAX_FUTURE_S, MAX_SAFE_INTEGER

Fields = dict[str, Any]
"""A product's fields by attribute name: str, float, int, bool or None (null: no value)."""

UPDATE_TIME = "updateTime"
"""The key of an operation's time in a product body (never an attribute name: those are lowercase)."""
_ID = re.compile(EXTERNAL_ID_PATTERN)
_TAG = re.compile(r"<[^>]*>")
_WS = re.compile(r"\s+")
_TRUE, _FALSE = frozenset({"true", "1", "yes"}), frozenset({"false", "0", "no"})
TEXT_TYPES = (AttributeType.text, AttributeType.keyword, AttributeType.category_path)


class ProductInvalid(AisleError):
    """422 ``product_invalid``: a field breaks the tenant's attribute configuration (``details.field``)."""

    code = ErrorCode.PRODUCT_INVALID

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"field '{field}': {problem}", details={"field": field})
        self.field = field


class UpdateTimeInvalid(ProductInvalid):
    """400 ``update_time_invalid``: an ``updateTime`` that cannot order the write (a rule the API's schema
    cannot state, so a schema-valid request is answered 400, as an event's time is)."""

    code = ErrorCode.UPDATE_TIME_INVALID


def check_product_id(product_id: str) -> str:
    """``product_id`` when it is an external id (1-256 characters, no control character).

    Raises: ProductInvalid naming ``id``."""
    if not isinstance(product_id, str) or not _ID.fullmatch(product_id):
        raise ProductInvalid("id", "must be 1-256 characters without control characters")
    return product_id


def parse_update_time(value: object, *, now: float | None = None) -> int:
    """An RFC 3339 timestamp as microseconds since the Unix epoch.

    Raises: UpdateTimeInvalid (400) naming ``updateTime``: not a string, no offset, unparsable, before 1970 or
    more than a day past ``now`` (default: the clock)."""
    if not isinstance(value, str):
        raise UpdateTimeInvalid(UPDATE_TIME, "must be an RFC 3339 timestamp string")
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise UpdateTimeInvalid(UPDATE_TIME, f"'{value[:64]}' is not an RFC 3339 timestamp") from None
    if parsed.tzinfo is None:
        raise UpdateTimeInvalid(UPDATE_TIME, "needs a UTC offset (Z or +hh:mm)")
    seconds = parsed.timestamp()
    if seconds < 0:
        raise UpdateTimeInvalid(UPDATE_TIME, "must not be before 1970-01-01T00:00:00Z")
    if seconds > (time.time() if now is None else now) + MAX_FUTURE_S:
        raise UpdateTimeInvalid(UPDATE_TIME, "must not be more than one day in the future")
    return round(seconds * 1_000_000)


def now_micros() -> int:
    """The clock as microseconds since the Unix epoch (the time of a write that gives none)."""
    return time.time_ns() // 1000


def format_time(micros: int) -> str:
    """RFC 3339 in UTC with microseconds, e.g. ``2026-11-28T09:15:00.000000Z``."""
    return datetime.fromtimestamp(micros / 1_000_000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _text(attr: Attribute, value: object) -> str | None:
    if isinstance(value, list) and attr.type is AttributeType.category_path:
        levels = [_text(attr, v) for v in value]
        return PATH_SEP.join(v for v in levels if v) or None
    if isinstance(value, bool):
        value = "true" if value else "false"
    elif isinstance(value, int | float):
        value = repr(value) if isinstance(value, float) else str(value)
    if not isinstance(value, str):
        raise ProductInvalid(attr.name, f"must be a string ({attr.type.value})")
    if attr.html:
        value = _WS.sub(" ", _TAG.sub(" ", value))
        value = html.unescape(value) if "&" in value else value
    return value.strip() or None


def _number(attr: Attribute, value: object) -> float | int | None:
    if isinstance(value, str):
        if not value.strip():
            return None
        try:
            value = float(value)
        except ValueError:
            raise ProductInvalid(attr.name, f"is not a {attr.type.value}") from None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ProductInvalid(attr.name, f"is not a {attr.type.value}")
    if not math.isfinite(value) or abs(value) > MAX_SAFE_INTEGER:
        raise ProductInvalid(attr.name, "must be finite and within +-2^53")
    if attr.role is AttributeRole.price and value < 0:
        raise ProductInvalid(attr.name, "is negative")
    if attr.type is AttributeType.integer:
        if value != round(value):
            raise ProductInvalid(attr.name, "is not an integer")
        return int(value)
    return float(value)


def _boolean(attr: Attribute, value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str | int) and not isinstance(value, bool):
        word = str(value).strip().lower()
        if not word:
            return None
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
    raise ProductInvalid(attr.name, "is not a boolean")


def field_value(attr: Attribute, value: object) -> Any:
    """``value`` as the catalog stores ``attr`` (see the module docstring); None stays None.

    Raises: ProductInvalid naming the attribute."""
    if value is None:
        return None
    if attr.type in TEXT_TYPES:
        return _text(attr, value)
    if attr.type in (AttributeType.number, AttributeType.integer):
        return _number(attr, value)
    return _boolean(attr, value)


def checked_fields(
    config: AttributeConfiguration, product_id: str, body: Mapping[str, Any]
) -> tuple[Fields, list[str]]:
    """The attributes given in ``body`` checked and typed, and the names it holds that the configuration
    does not (ignored). ``id`` and ``updateTime`` are not fields: an ``id`` must equal ``product_id``.

    Raises: ProductInvalid naming the first bad field (or ``id``)."""
    fields: Fields = {}
    ignored: list[str] = []
    for name, value in body.items():
        if name == UPDATE_TIME:
            continue
        if name == "id":
            if value != product_id:
                raise ProductInvalid("id", f"'{str(value)[:64]}' is not the product's id '{product_id}'")
            continue
        attr = config.by_name(name)
        if name in STANDARD_FIELDS:
            fields[name] = stock_value(name, value)
            continue
        if attr is None:
            ignored.append(name)
            continue
        fields[name] = field_value(attr, value)
    return fields, ignored


def stock_value(name: str, value: object) -> Any:
    """A standard stock field's value checked (:mod:`aisle.catalog.stock_fields`).

    Raises: ProductInvalid naming the field (``inventories.<storeId>.availability``, ...)."""
    try:
        if name == INVENTORIES_FIELD:
            return check_inventories(value)
        return check_availability(value)
    except StockInvalid as exc:
        raise ProductInvalid(exc.field, exc.problem) from None


def whole_product(config: AttributeConfiguration, fields: Fields) -> Fields:
    """Every attribute of the configuration, from ``fields`` (missing ones null), and the standard stock
    fields ``fields`` gives: an upsert's row."""
    row = {attr.name: fields.get(attr.name) for attr in config.attributes}
    return row | {name: fields[name] for name in STANDARD_FIELDS if name in fields}
