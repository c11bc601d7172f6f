"""Recursive product conditions: parsing from JSON and evaluation on catalog rows."""

from __future__ import annotations

import polars as pl
import pytest
from pydantic import TypeAdapter, ValidationError

from aisle.core.errors import BadRequest
from aisle.recs.serving.conditions import Condition, compile_condition
from aisle.recs.serving.products import ProductTable

PRODUCTS = pl.DataFrame(
    {
        "id": ["1", "2", "3", "4"],
        "title": ["Red Shirt", "Blue Jeans", "Red Shoes", "Hat"],
        "brand": ["Nike", "Levis", "nike", None],
        "price": [20.0, 55.0, 80.0, None],
        "category": ["Apparel > Topwear > Shirts", "Apparel > Bottomwear > Jeans", "Footwear > Shoes", ""],
        "size": ["42", "32", "42", None],
    }
)
ADAPTER: TypeAdapter[Condition] = TypeAdapter(Condition)


@pytest.fixture(scope="module")
def table() -> ProductTable:
    return ProductTable.from_frame("v1", PRODUCTS)


def matching(table: ProductTable, raw: dict) -> list[str]:
    pred = compile_condition(ADAPTER.validate_python(raw), table)
    return [pid for r, pid in enumerate(table.ids) if pred(r)]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"op": "eq", "field": "brand", "value": "NIKE"}, ["1", "3"]),
        ({"op": "ne", "field": "brand", "value": "nike"}, ["2", "4"]),
        ({"op": "in", "field": "brand", "value": ["levis", "Adidas"]}, ["2"]),
        ({"op": "not_in", "field": "brand", "value": ["levis"]}, ["1", "3", "4"]),
        ({"op": "lt", "field": "price", "value": 55}, ["1"]),
        ({"op": "lte", "field": "price", "value": 55}, ["1", "2"]),
        ({"op": "gt", "field": "price", "value": 55}, ["3"]),
        ({"op": "gte", "field": "price", "value": "55"}, ["2", "3"]),
        ({"op": "exists", "field": "category"}, ["1", "2", "3"]),
        ({"op": "exists", "field": "price", "value": False}, ["4"]),
        ({"op": "contains", "field": "category", "value": "topwear"}, ["1"]),
        ({"op": "eq", "field": "size", "value": 42}, ["1", "3"]),
        ({"op": "eq", "field": "id", "value": "2"}, ["2"]),
    ],
)
def test_leaf_operators(table: ProductTable, raw: dict, expected: list[str]) -> None:
    assert matching(table, raw) == expected


def test_and_or_not_nest(table: ProductTable) -> None:
    raw = {
        "op": "or",
        "conditions": [
            {
                "op": "and",
                "conditions": [
                    {"op": "contains", "field": "title", "value": "red"},
                    {"op": "not", "condition": {"op": "lt", "field": "price", "value": 50}},
                ],
            },
            {"op": "eq", "field": "title", "value": "hat"},
        ],
    }
    assert matching(table, raw) == ["3", "4"]


def test_unknown_field_is_a_clear_400(table: ProductTable) -> None:
    with pytest.raises(BadRequest) as err:
        matching(table, {"op": "eq", "field": "colour", "value": "red"})
    assert err.value.code == "condition_field_unknown" and "colour" in err.value.message


@pytest.mark.parametrize(
    "raw",
    [
        {"op": "between", "field": "price", "value": 1},
        {"op": "in", "field": "brand", "value": []},
        {"op": "and", "conditions": []},
        {"op": "eq", "field": "brand"},
        {"op": "not"},
    ],
)
def test_malformed_conditions_are_rejected(raw: dict) -> None:
    with pytest.raises(ValidationError):
        ADAPTER.validate_python(raw)


def test_json_schema_documents_every_operator() -> None:
    schema = str(ADAPTER.json_schema())
    for op in (
        "and",
        "or",
        "not",
        "eq",
        "ne",
        "in",
        "not_in",
        "lt",
        "lte",
        "gt",
        "gte",
        "exists",
        "contains",
    ):
        assert f"'{op}'" in schema
