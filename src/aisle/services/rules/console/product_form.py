"""The product page's form and figures: which fields it edits, the merge patch a submitted form makes,
and how values, sequences and times are written for people.

The console edits a product's price and its availability. The price is the attribute with the ``price``
role (else one named ``price``); availability is the standard ``availability`` attribute with the values
of :data:`AVAILABILITY` (issue 41), offered only when the tenant's configuration has it. A submitted form
becomes a JSON merge patch (RFC 7396) of the fields whose value differs from what the form showed, so a
change made meanwhile to the other field is not written back over. Values go to the engine as typed
(``"12.50"``): the catalog's own checks (:mod:`aisle.catalog.products`) judge them, not a copy here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from aisle.core.tenancy import TenantConfig
from aisle.core.tenant_config import AttributeRole

AVAILABILITY_FIELD = "availability"
AVAILABILITY = ("IN_STOCK", "OUT_OF_STOCK", "PREORDER", "BACKORDER")
"""The standard availability values (as Google Retail's ``Product.availability``)."""


@dataclass(frozen=True)
class Editable:
    """What the form edits for a tenant: the price attribute's name, the availability attribute's (None
    when the tenant has none) and, when something cannot be edited, why (shown on the page)."""

    price: str | None
    availability: str | None
    why: str = ""


def editable_fields(config: TenantConfig) -> Editable:
    """The fields of :class:`Editable` for the tenant's attribute configuration."""
    attributes = config.attributes.attributes
    price = next((a.name for a in attributes if a.role is AttributeRole.price), None)
    price = price or next((a.name for a in attributes if a.name == "price"), None)
    availability = config.attributes.by_name(AVAILABILITY_FIELD)
    missing = []
    if price is None:
        missing.append("no price attribute (one with the role price)")
    if availability is None:
        missing.append(
            f"no {AVAILABILITY_FIELD} attribute, so there is no stock to change here; adding one "
            f"(a keyword with the values {', '.join(AVAILABILITY)}) to attribute_configuration.json "
            "brings the field to this form"
        )
    why = f"This tenant has {' and '.join(missing)}." if missing else ""
    return Editable(price, availability.name if availability else None, why)


def title_field(config: TenantConfig) -> str | None:
    """The name of the attribute with the ``title`` role, if any."""
    return next((a.name for a in config.attributes.attributes if a.role is AttributeRole.title), None)


def shown(value: object) -> str:
    """A stored value as the form shows it in an input (``599.0`` as ``599.00``; None as empty)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def patch_of(form: Mapping[str, Any], editable: Editable) -> tuple[dict[str, Any], dict[str, str]]:
    """The merge patch of the fields the merchandiser changed (form field ``<name>``, shown value
    ``was_<name>``), and messages by field for what the console refuses before sending (an empty price)."""
    patch: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for name in (editable.price, editable.availability):
        if name is None or name not in form:
            continue
        value = str(form.get(name, "")).strip()
        if value == str(form.get(f"was_{name}", "")).strip():
            continue
        if not value:
            errors[name] = "Enter a value: an empty one would remove the field."
            continue
        patch[name] = value
    return patch, errors


def number(value: object, digits: int | None = None) -> str:
    """A number with thousands separators (``12,345``; ``digits`` decimals when given); others as text."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "" if value is None else str(value)
    if digits is not None:
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) or value != int(value) else f"{int(value):,}"


def field_value(value: object) -> str:
    """A field's value on the page: numbers formatted, booleans as yes/no, none as an em dash. A whole
    number under 10,000 is not grouped (CLDR's two minimum grouping digits), so a year reads 2011."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) and abs(value) < 10_000:
        return str(value)
    return number(value)


def money(value: object) -> str:
    """A price with two decimals and thousands separators (``1,299.00``); none as an em dash."""
    return "—" if value is None else number(value, 2)


def micros_time(micros: int) -> str:
    """Microseconds since the epoch as ``2026-11-28 09:15:00 UTC``."""
    return datetime.fromtimestamp(micros / 1_000_000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def iso_time(value: str | None) -> str:
    """An RFC 3339 time as ``2026-11-28 09:15:00 UTC`` (as given when it cannot be read)."""
    if not value:
        return ""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return value
    return parsed.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
