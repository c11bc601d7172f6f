"""Recommendation rules: FILTER, BOOST and BURY actions and their recursive conditions (schema only).

A container stores its merchandiser-authored rules (``recommendationRules``, authored in the console);
the predict engine applies them to every answer of the container, before the request's own ``actions``
(spec "PredictAction"; see :mod:`aisle.recs.serving.saved_rules`). How a condition is evaluated over
the product table lives in :mod:`aisle.recs.serving.conditions`; how actions change scores in
:mod:`aisle.recs.serving.rank`.

A condition is a JSON tree discriminated by ``op``::

    {"op": "and", "conditions": [
        {"op": "eq", "field": "brand", "value": "Nike"},
        {"op": "not", "condition": {"op": "lt", "field": "price", "value": 20}}]}
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from aisle.core.validation import NumbersChecked

Scalar = str | int | float | bool

MAX_ACTIONS = 50
"""Most actions a request may carry, and most rules a container may save; the two together too."""


class _Node(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EqCondition(_Node):
    """``field`` equals (``eq``) or differs from (``ne``) ``value``."""

    op: Literal["eq", "ne"]
    field: str
    value: Annotated[Scalar, NumbersChecked]


class InCondition(_Node):
    """``field`` is (``in``) or is not (``not_in``) one of ``value``."""

    op: Literal["in", "not_in"]
    field: str
    value: Annotated[list[Scalar], Field(min_length=1, max_length=1000), NumbersChecked]


class RangeCondition(_Node):
    """``field`` compared to ``value`` with ``<`` (lt), ``<=`` (lte), ``>`` (gt) or ``>=`` (gte)."""

    op: Literal["lt", "lte", "gt", "gte"]
    field: str
    value: Annotated[float | str, NumbersChecked]


class ExistsCondition(_Node):
    """``field`` is set and non-empty (``value`` true, the default) or missing (``value`` false)."""

    op: Literal["exists"]
    field: str
    value: bool = True


class ContainsCondition(_Node):
    """``value`` is a case-insensitive substring of ``field`` (or an element of a list field)."""

    op: Literal["contains"]
    field: str
    value: Annotated[str, Field(min_length=1)]


class AndCondition(_Node):
    """Every sub-condition holds."""

    op: Literal["and"]
    conditions: Annotated[list[Condition], Field(min_length=1, max_length=100)]


class OrCondition(_Node):
    """At least one sub-condition holds."""

    op: Literal["or"]
    conditions: Annotated[list[Condition], Field(min_length=1, max_length=100)]


class NotCondition(_Node):
    """The sub-condition does not hold."""

    op: Literal["not"]
    condition: Condition


Condition = Annotated[
    AndCondition
    | OrCondition
    | NotCondition
    | EqCondition
    | InCondition
    | RangeCondition
    | ExistsCondition
    | ContainsCondition,
    Field(discriminator="op"),
]

for _m in (AndCondition, OrCondition, NotCondition):
    _m.model_rebuild()


def condition_fields(cond: Condition | None) -> set[str]:
    """Every product field a condition's leaves name (empty for no condition)."""
    if cond is None:
        return set()
    if isinstance(cond, AndCondition | OrCondition):
        return set().union(*(condition_fields(c) for c in cond.conditions))
    if isinstance(cond, NotCondition):
        return condition_fields(cond.condition)
    return {cond.field}


class PredictAction(BaseModel):
    """A rule of the request (spec "PredictAction"), authored in the rules UI.

    ``weight`` is in units of the slot's normalised score range (see module docs); FILTER ignores it.
    Without ``condition`` the action matches every product; without ``slotConfigId`` it applies to
    every slot.
    """

    model_config = ConfigDict(extra="forbid")

    type: Literal["FILTER", "BOOST", "BURY"] = Field(
        description="FILTER keeps matching items only; BOOST adds `weight` to their score; BURY subtracts it."
    )
    weight: Annotated[float, Field(ge=0, le=100)] = Field(
        default=1.0,
        description="Score change in units of the slot's normalised score range [0, 1]: 1 moves an item "
        "across the whole range, 0.1 nudges it. Ignored by FILTER.",
    )
    condition: Condition | None = Field(
        default=None,
        description='Recursive condition on product fields, discriminated by `op`: `and` / `or` '
        '(`conditions`: list), `not` (`condition`), and leaves `{"op", "field", "value"}` with op '
        "`eq ne` (one value; strings case-insensitive), `in not_in` (list), `lt lte gt gte` (number), "
        "`exists` (true/false), `contains` (substring, or element of a list field). Omitted: every "
        "product matches.",
        examples=[{"op": "and", "conditions": [{"op": "eq", "field": "brand", "value": "Nike"},
                                                {"op": "lt", "field": "price", "value": 100}]}],
    )  # fmt: skip
    slotConfigId: str | None = Field(
        default=None, description="Apply to this slot of the container only; omitted: every slot."
    )
