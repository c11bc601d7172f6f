"""Request filters as tantivy queries (no effect on scores): one field's filter clause.

Errors: unknown field → 400 ``filter_unknown``; a field not declared filterable → 400
``filter_not_allowed``; a value of the wrong type → 400 ``filter_value_invalid``.
"""

from __future__ import annotations

from typing import Any

import tantivy

from aisle.catalog.schema import PATH_SEP
from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.tenant_config import Attribute, AttributeType
from aisle.search.index.reader import TenantIndex
from aisle.search.index.schema import MAX_CATEGORY_LEVELS, keyword_field, level_field, numeric_field
from aisle.search.model import AppliedFilter, FilterSpec

_RANGE_KEYS = {"gt", "gte", "lt", "lte"}


def _range_query(index: TenantIndex, attr: Attribute, rng: dict[str, float]) -> tantivy.Query:
    field = numeric_field(attr)
    if field is None:
        raise BadRequest(f"field '{attr.name}' is not filterable by range", code=ErrorCode.FILTER_NOT_ALLOWED)
    ftype = tantivy.FieldType.Float if attr.type is AttributeType.number else tantivy.FieldType.Integer
    cast = float if attr.type is AttributeType.number else int
    lo_key = "gte" if "gte" in rng else ("gt" if "gt" in rng else None)
    hi_key = "lte" if "lte" in rng else ("lt" if "lt" in rng else None)
    lo = cast(rng[lo_key]) if lo_key else None
    hi = cast(rng[hi_key]) if hi_key else None
    return tantivy.Query.range_query(
        index.schema, field, ftype, lo, hi, include_lower=lo_key != "gt", include_upper=hi_key != "lt"
    )


def _numbers_query(index: TenantIndex, attr: Attribute, values: list[Any]) -> tantivy.Query:
    """Products whose number ``attr`` is one of ``values``: a term set over the indexed field (its
    posting lists; a range ``[v, v]`` per value scanned the fast column once each: 100 prices took 8.4 ms
    on 50,000 documents against 0.35 ms). An integer attribute matches a value's integer part, as its
    range filter does."""
    field = numeric_field(attr)
    if field is None:
        raise BadRequest(f"field '{attr.name}' is not filterable by value", code=ErrorCode.FILTER_NOT_ALLOWED)
    cast = float if attr.type is AttributeType.number else int
    terms = list(dict.fromkeys(cast(v) for v in values))
    if len(terms) == 1:
        return tantivy.Query.term_query(index.schema, field, terms[0])
    return tantivy.Query.term_set_query(index.schema, field, terms)


def _values(spec: FilterSpec) -> list[str | float | bool]:
    return list(spec.value) if isinstance(spec.value, list) else [spec.value]  # type: ignore[list-item]


def filter_clause(index: TenantIndex, spec: FilterSpec) -> tuple[tantivy.Query, AppliedFilter]:
    """One field's filter query and how it was applied. Raises BadRequest (see module docstring)."""
    attr = index.attribute(spec.field)
    if attr is None:
        raise BadRequest(
            f"filter field '{spec.field}' is not an attribute of this tenant",
            code=ErrorCode.FILTER_UNKNOWN,
            details={"field": spec.field},
        )
    if not attr.filterable:
        raise BadRequest(
            f"field '{spec.field}' is not filterable",
            code=ErrorCode.FILTER_NOT_ALLOWED,
            details={"field": spec.field},
        )
    schema = index.schema
    if attr.type in (AttributeType.number, AttributeType.integer):
        if isinstance(spec.value, dict):
            return _range_query(index, attr, spec.value), AppliedFilter(field=attr.name, range=spec.value)
        values = _values(spec)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            raise BadRequest(
                f"filter '{spec.field}' takes numbers or a range", code=ErrorCode.FILTER_VALUE_INVALID
            )
        return _numbers_query(index, attr, values), AppliedFilter(field=attr.name, values=values)
    if isinstance(spec.value, dict):
        raise BadRequest(f"filter '{spec.field}' does not take a range", code=ErrorCode.FILTER_VALUE_INVALID)
    if attr.type is AttributeType.boolean:
        values = _values(spec)
        if not all(isinstance(v, bool) for v in values):
            raise BadRequest(
                f"filter '{spec.field}' takes true or false", code=ErrorCode.FILTER_VALUE_INVALID
            )
        subs = [tantivy.Query.term_query(schema, f"b_{attr.name}", v) for v in values]
        query = (
            subs[0]
            if len(subs) == 1
            else tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in subs])
        )
        return query, AppliedFilter(field=attr.name, values=values)
    if keyword_field(attr) is None:
        raise BadRequest(f"field '{spec.field}' is not filterable", code=ErrorCode.FILTER_NOT_ALLOWED)
    lookup = index.keyword_values.get(attr.name, {})
    canonical = list(dict.fromkeys(c for v in _values(spec) for c in lookup.get(str(v).lower(), [str(v)])))
    subs = []
    for value in canonical:
        if attr.type is AttributeType.category_path:
            level = min(value.count(PATH_SEP), MAX_CATEGORY_LEVELS - 1)
            subs.append(tantivy.Query.term_query(schema, level_field(attr, level), value))
        else:
            subs.append(tantivy.Query.term_query(schema, f"k_{attr.name}", value))
    if len(subs) == 1:
        query = subs[0]
    elif attr.type is AttributeType.category_path:
        query = tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in subs])
    else:
        query = tantivy.Query.term_set_query(schema, f"k_{attr.name}", canonical)
    return query, AppliedFilter(field=attr.name, values=list(canonical))
