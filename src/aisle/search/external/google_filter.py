"""Aisle's filters, facets and sort in Google Cloud Retail's terms (Retail API v2 ``SearchRequest``).

Source of the grammar: Google Cloud Retail, "Filter and order results"
(cloud.google.com/retail/docs/filter-and-order) and the ``SearchRequest.filter``, ``order_by`` and
``FacetSpec`` fields of ``google.cloud.retail.v2``:

* a text field: ``brands: ANY("Nike", "Adidas")``; values in double quotes, a ``"`` or ``\\`` inside a
  value escaped with a backslash;
* a number field: ``price: IN(10.0e, 50.0i)``, bounds suffixed ``e`` (exclusive) or ``i``
  (inclusive), ``*`` for an open end;
* expressions joined by ``AND`` / ``OR`` with parentheses; Aisle's filters are ANDed, the values of one
  filter ORed.

Aisle attribute names map to Retail keys through a field map (defaults: :data:`DEFAULT_FIELD_MAP`,
anything else ``attributes.<name>``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal

from aisle.core.errors import BadRequest, ErrorCode
from aisle.search.model import FilterSpec, SortOrder

DEFAULT_FIELD_MAP: dict[str, str] = {
    "brand": "brands",
    "category": "categories",
    "color": "colorFamilies",
    "price": "price",
}
"""Aisle attribute name -> Retail product field (Retail ``Product`` JSON names)."""

NUMERIC_KEYS = frozenset({"price", "originalPrice", "cost", "rating", "ratingCount", "discount"})
"""Retail system fields that are numbers (``attributes.*`` numbers are told by the value's type)."""

# Retail custom attribute keys: letters, digits and underscores (Product.attributes, max 128 bytes).
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


def retail_key(field: str, field_map: Mapping[str, str] | None = None) -> str:
    """The Retail field an Aisle attribute names: the map's entry, else ``attributes.<field>``.

    Raises:
        BadRequest (``filter_not_allowed``): a name that cannot be a Retail attribute key.
    """
    mapped = (field_map or {}).get(field) or DEFAULT_FIELD_MAP.get(field)
    if mapped:
        return mapped
    if not _KEY.match(field):
        raise BadRequest(
            f"attribute '{field}' has no Google Retail key (letters, digits and '_' only)",
            code=ErrorCode.FILTER_NOT_ALLOWED,
            details={"field": field},
        )
    return f"attributes.{field}"


def quote(value: str) -> str:
    """A Retail string literal: double quotes, with ``\\`` and ``"`` escaped by a backslash."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def number(value: float) -> str:
    """A Retail number literal in positional notation (``10.0``, ``0.0000001``), never ``1e-07``."""
    text = format(Decimal(repr(float(value))), "f")
    return text if "." in text else text + ".0"


def _bound(strict: float | None, loose: float | None, tighter: bool) -> str:
    """One end of ``IN(lo, hi)``: ``strict`` (gt/lt, suffix ``e``) or ``loose`` (gte/lte, ``i``); with
    both, the tighter one (``tighter``: whether ``strict`` is at least as tight), ``*`` with neither."""
    if strict is not None and (loose is None or tighter):
        return number(strict) + "e"
    return "*" if loose is None else number(loose) + "i"


def _range(key: str, bounds: Mapping[str, float]) -> str:
    gt, gte, lt, lte = (bounds.get(k) for k in ("gt", "gte", "lt", "lte"))
    lo = _bound(gt, gte, gt is not None and gte is not None and gt >= gte)
    hi = _bound(lt, lte, lt is not None and lte is not None and lt <= lte)
    return f"{key}: IN({lo}, {hi})"


def _text(value: str | float | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else number(value)


def filter_expression(spec: FilterSpec, field_map: Mapping[str, str] | None = None) -> str:
    """One Aisle filter as a Retail expression (module docstring); raises as :func:`retail_key`."""
    key = retail_key(spec.field, field_map)
    value = spec.value
    if isinstance(value, dict):
        return _range(key, value)
    values = value if isinstance(value, list) else [value]
    numeric = key in NUMERIC_KEYS or all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in values
    )
    if not numeric:
        return f"{key}: ANY({', '.join(quote(_text(v)) for v in values)})"
    parts = []
    for v in values:
        try:
            n = float(v)
        except ValueError:
            raise BadRequest(
                f"filter '{spec.field}' takes numbers, not {v!r}",
                code=ErrorCode.FILTER_VALUE_INVALID,
                details={"field": spec.field},
            ) from None
        parts.append(f"{key}: IN({number(n)}i, {number(n)}i)")
    return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"


def retail_filter(filters: Sequence[FilterSpec], field_map: Mapping[str, str] | None = None) -> str:
    """Every filter ANDed (``""`` for none): ``brands: ANY("Nike") AND price: IN(10.0e, 50.0i)``."""
    return " AND ".join(filter_expression(f, field_map) for f in filters)


def retail_order_by(sort: SortOrder, field_map: Mapping[str, str] | None = None) -> str:
    """Retail ``orderBy``: ``""`` (relevance), ``"price"`` (ascending) or ``"price desc"``."""
    if sort == "relevance":
        return ""
    key = retail_key("price", field_map)
    return key if sort == "price_asc" else f"{key} desc"
