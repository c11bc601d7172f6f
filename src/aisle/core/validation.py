"""The one validation of ids, numbers, timestamps and free-form JSON that every service shares.

Three kinds of value reach storage keys, index queries or JSON encoders from a request, and each has one
rule here, so a hostile value gets the same clear 4xx from every service instead of a 500 from whichever
library meets it first:

* **Resource ids** (rules, containers, slots, models, jobs) become object-store keys:
  :data:`ID_PATTERN`, 1-128 ASCII letters, digits, ``_ . -``, starting with a letter or digit.
* **External ids** (products, visitors, users, sessions) come from the retailer's systems and are only
  looked up or stored as values: :data:`ExternalId`, 1-256 characters, no control characters.
* **Numbers** in filters, ranges and features: finite and within +-2^53 (:data:`MAX_SAFE_INTEGER`,
  JavaScript's ``Number.MAX_SAFE_INTEGER`` + 1, the range where a JSON number is exact as a double and
  fits tantivy's i64/f64 fields), see :data:`NumbersChecked` and :func:`check_json_value`.
* **Event timestamps**: from the Unix epoch to :data:`MAX_FUTURE_S` past the server's clock
  (:func:`check_event_time`), so a typo cannot sit first in a visitor's history for ever.
"""

from __future__ import annotations

import math
import re
import time
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"
"""A resource id: 1-128 of ``[A-Za-z0-9_.-]``, first a letter or digit (safe as a path segment)."""

ID_RE = re.compile(ID_PATTERN)

EXTERNAL_ID_PATTERN = r"^[^\x00-\x1f\x7f]{1,256}$"
ATTRIBUTION_TOKEN_PATTERN = r"^[A-Za-z0-9_.~-]{1,128}$"
"""An attribution token as an event carries it back: 1-128 URL-safe characters (Aisle issues 24)."""
"""An external id: 1-256 characters, none of them a C0 control character or DEL."""

WHITESPACE = r"\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
"""White space by Python's ``str.isspace`` and by ECMA-262's ``\\s`` together, as a character-class body.
A schema pattern built on ``\\S`` lets the two disagree (U+0085 is blank to Python and not to ECMA-262,
U+FEFF the other way round), so a value the OpenAPI document admits would be refused."""
NOT_BLANK_PATTERN = f"[^{WHITESPACE}]"
"""A pattern (unanchored) that a string matches when it holds a character that is not white space."""

MAX_SAFE_INTEGER = 2**53
"""Largest magnitude of a number accepted in a request (2^53: exact as a float64, fits an i64)."""

MAX_FUTURE_S = 86_400.0
"""How far past the server's clock an event's timestamp may lie (one day, for clock skew), seconds."""

MAX_JSON_DEPTH = 32
"""Deepest nesting of a free-form JSON value (user features)."""

ResourceId = Annotated[
    str,
    Field(
        pattern=ID_PATTERN,
        description="1-128 letters, digits, '_', '.' or '-', starting with a letter or digit.",
        examples=["home-page"],
    ),
]
"""A pydantic field type for a resource id (rule, container, slot, model, job)."""

ExternalId = Annotated[
    str,
    Field(
        pattern=EXTERNAL_ID_PATTERN,
        description="1-256 characters, no control characters.",
        examples=["p-1001"],
    ),
]
"""A pydantic field type for a product, visitor, user or session id."""


def is_resource_id(value: str) -> bool:
    """Whether ``value`` matches :data:`ID_PATTERN` (so it can name a stored object)."""
    return ID_RE.fullmatch(value) is not None


def check_number(value: float) -> float:
    """``value`` when finite and within +-:data:`MAX_SAFE_INTEGER`; else ValueError saying which."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("must be a finite number (not NaN or infinity)")
    if abs(value) > MAX_SAFE_INTEGER:
        raise ValueError(f"must be between -2^53 and 2^53 ({MAX_SAFE_INTEGER:,})")
    return value


def check_json_value(value: Any, *, where: str = "", depth: int = 0) -> Any:
    """``value`` when every number in it passes :func:`check_number` and it nests at most 32 deep.

    Args:
        value: a decoded JSON value (dict, list, str, int, float, bool or None).
        where: the path reported in the error, e.g. ``features`` gives ``features.brand_affinity.Nike``.

    Raises:
        ValueError: naming the path of the first bad number or the too-deep container.
    """
    prefix = f"{where}: " if where else ""
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"{prefix}nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        try:
            check_number(value)
        except ValueError as exc:
            raise ValueError(f"{prefix}{exc}") from None
        return value
    if isinstance(value, dict):
        for key, item in value.items():
            check_json_value(item, where=f"{where}.{key}" if where else str(key), depth=depth + 1)
        return value
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            check_json_value(item, where=f"{where}[{i}]", depth=depth + 1)
        return value
    return value  # not JSON-decoded data (a model instance): its own fields were checked


NumbersChecked = BeforeValidator(lambda value: check_json_value(value))
"""Annotate a union field with this (``Annotated[str | float | list[...], NumbersChecked]``) so a bad
number anywhere in it is one clear error on the field, before the union's members are tried."""


def check_event_time(epoch_s: float, *, now: float | None = None) -> float:
    """``epoch_s`` when it lies between the Unix epoch and one day past ``now`` (default: the clock).

    Raises:
        ValueError: naming the bound that was crossed.
    """
    check_number(epoch_s)
    limit = (time.time() if now is None else now) + MAX_FUTURE_S
    if epoch_s < 0:
        raise ValueError("must not be before 1970-01-01T00:00:00Z")
    if epoch_s > limit:
        raise ValueError("must not be more than one day in the future")
    return epoch_s
