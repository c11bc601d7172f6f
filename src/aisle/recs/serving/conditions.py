"""Recursive conditions on product fields, used by the FILTER, BOOST and BURY actions of POST /predict.

A condition is a JSON tree discriminated by ``op``::

    {"op": "and", "conditions": [
        {"op": "eq", "field": "brand", "value": "Nike"},
        {"op": "not", "condition": {"op": "lt", "field": "price", "value": 20}}]}

Leaves compare one product field: ``eq ne`` (one value), ``in not_in`` (a list), ``lt lte gt gte``
(numbers, or strings compared lexically), ``exists`` (value true/false: the field is set and
non-empty), ``contains`` (case-insensitive substring of a text field, or element of a list field;
``"Topwear"`` matches the category path ``"Apparel > Topwear > Tshirts"``). String equality is
case-insensitive. A product without the field fails every comparison except ``ne`` and ``not_in``
(which it passes) and ``exists false``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aisle.core.errors import BadRequest, ErrorCode
from aisle.recs.actions import (
    AndCondition,
    Condition,
    EqCondition,
    ExistsCondition,
    InCondition,
    NotCondition,
    OrCondition,
    RangeCondition,
)
from aisle.recs.serving.products import ProductTable

RowPredicate = Callable[[int], bool]
MAX_DEPTH = 32


def _norm(v: Any) -> Any:
    return v.casefold() if isinstance(v, str) else v


def _empty(v: Any) -> bool:
    return v is None or v == "" or (isinstance(v, list | tuple) and not v)


def _eq(a: Any, b: Any) -> bool:
    if isinstance(a, list | tuple):
        return any(_eq(x, b) for x in a)
    numeric_a = isinstance(a, int | float) and not isinstance(a, bool)
    numeric_b = isinstance(b, int | float) and not isinstance(b, bool)
    if numeric_a != numeric_b and not isinstance(a, bool) and not isinstance(b, bool):
        try:  # "42" == 42: ids and sizes are often strings in one catalog, numbers in a request
            return float(a) == float(b)
        except ValueError:
            return False
    return _norm(a) == _norm(b)


def _cmp(a: Any, b: float | str, op: str) -> bool:
    if isinstance(b, str) and isinstance(a, str):
        x, y = a, b
    else:
        try:
            x, y = float(a), float(b)  # type: ignore[assignment]
        except (TypeError, ValueError):
            return False
    if op == "lt":
        return x < y
    if op == "lte":
        return x <= y
    if op == "gt":
        return x > y
    return x >= y


def _contains(a: Any, needle: str) -> bool:
    if isinstance(a, list | tuple):
        return any(_contains(x, needle) for x in a)
    return needle.casefold() in str(a).casefold()


def compile_condition(cond: Condition, table: ProductTable, _depth: int = 0) -> RowPredicate:
    """Compile ``cond`` into a predicate over catalog rows of ``table``.

    Raises:
        BadRequest: ``condition_field_unknown`` when a leaf names a field the catalog does not have
            (``id`` is always available); ``condition_too_deep`` past 32 levels.
    """
    if _depth > MAX_DEPTH:
        raise BadRequest(f"condition nests deeper than {MAX_DEPTH} levels", code=ErrorCode.CONDITION_TOO_DEEP)
    if isinstance(cond, AndCondition | OrCondition):
        parts = [compile_condition(c, table, _depth + 1) for c in cond.conditions]
        if isinstance(cond, AndCondition):
            return lambda r: all(p(r) for p in parts)
        return lambda r: any(p(r) for p in parts)
    if isinstance(cond, NotCondition):
        inner = compile_condition(cond.condition, table, _depth + 1)
        return lambda r: not inner(r)
    column = _column(cond.field, table)
    if isinstance(cond, ExistsCondition):
        want = cond.value
        return lambda r: (not _empty(column[r])) == want
    if isinstance(cond, EqCondition):
        v, negate = cond.value, cond.op == "ne"
        return lambda r: (column[r] is not None and _eq(column[r], v)) != negate
    if isinstance(cond, InCondition):
        values, negate = cond.value, cond.op == "not_in"
        fast = (
            {_norm(x) for x in values if isinstance(x, str)}
            if all(isinstance(x, str) for x in values)
            else None
        )

        def member(r: int) -> bool:
            a = column[r]
            if a is None:
                return False
            if fast is not None and isinstance(a, str):
                return a.casefold() in fast
            return any(_eq(a, x) for x in values)

        return lambda r: member(r) != negate
    if isinstance(cond, RangeCondition):
        bound, op = cond.value, cond.op
        return lambda r: column[r] is not None and _cmp(column[r], bound, op)
    needle = cond.value
    return lambda r: column[r] is not None and _contains(column[r], needle)


def _column(name: str, table: ProductTable) -> list[Any]:
    if name == "id":
        return table.ids
    column = table.columns.get(name)
    if column is None:
        known = ", ".join(sorted(["id", *table.columns]))
        raise BadRequest(
            f"condition field '{name}' is not a catalog field (known: {known})",
            code=ErrorCode.CONDITION_FIELD_UNKNOWN,
            details={"field": name},
        )
    return column
