"""Aisle filters, facets and sort in Google Retail's grammar (aisle.search.external.google_filter)."""

from __future__ import annotations

import pytest
from tests.search.external.conftest import CATALOG

from aisle.core.errors import BadRequest
from aisle.search.external.google_filter import number, quote, retail_filter, retail_order_by
from aisle.search.model import FilterSpec


def f(field: str, value: object) -> FilterSpec:
    return FilterSpec(field=field, value=value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ([f("brand", "Nike")], 'brands: ANY("Nike")'),
        ([f("brand", ["Nike", "Adidas"])], 'brands: ANY("Nike", "Adidas")'),
        ([f("price", {"gt": 10, "lte": 50})], "price: IN(10.0e, 50.0i)"),
        ([f("price", {"gte": 10})], "price: IN(10.0i, *)"),
        ([f("price", {"lt": 99.5})], "price: IN(*, 99.5e)"),
        ([f("price", 25)], "price: IN(25.0i, 25.0i)"),
        ([f("price", [10, 25])], "(price: IN(10.0i, 10.0i) OR price: IN(25.0i, 25.0i))"),
        (
            [f("color", "Red"), f("material", "mesh")],
            'colorFamilies: ANY("Red") AND attributes.material: ANY("mesh")',
        ),
        ([f("in_stock", True)], 'attributes.in_stock: ANY("true")'),
        ([f("category", "Footwear > Shoes")], 'categories: ANY("Footwear > Shoes")'),
        ([], ""),
    ],
)
def test_filters_in_retail_grammar(filters: list[FilterSpec], expected: str) -> None:
    assert retail_filter(filters) == expected


def test_quotes_and_backslashes_are_escaped() -> None:
    assert quote('Puma "Speed"') == r'"Puma \"Speed\""'
    assert quote("a\\b") == r'"a\\b"'
    assert retail_filter([f("brand", 'say "hi" \\ bye')]) == r'brands: ANY("say \"hi\" \\ bye")'


def test_the_tighter_of_two_lower_bounds_wins() -> None:
    assert retail_filter([f("price", {"gt": 10, "gte": 10})]) == "price: IN(10.0e, *)"
    assert retail_filter([f("price", {"gt": 5, "gte": 10})]) == "price: IN(10.0i, *)"
    assert retail_filter([f("price", {"lt": 50, "lte": 40})]) == "price: IN(*, 40.0i)"


def test_numbers_are_positional_never_exponents() -> None:
    assert number(1e-7) == "0.0000001"
    assert number(9007199254740992) == "9007199254740992.0"
    assert number(-3.25) == "-3.25"


def test_an_attribute_name_retail_cannot_key_is_a_400() -> None:
    with pytest.raises(BadRequest) as err:
        retail_filter([f("size-eu", "42")])
    assert err.value.status == 400 and err.value.code == "filter_not_allowed"


def test_sort_orders() -> None:
    assert retail_order_by("relevance") == ""
    assert retail_order_by("price_asc") == "price"
    assert retail_order_by("price_desc") == "price desc"
    assert retail_order_by("price_asc", {"price": "attributes.sale_price"}) == "attributes.sale_price"


@pytest.mark.parametrize(
    ("filters", "ids"),
    [
        ([f("brand", 'Puma "Speed"')], []),
        ([f("brand", ["Nike", "Puma"]), f("price", {"gt": 10, "lte": 50})], ["p1", "p4"]),
        ([f("price", {"lt": 10})], ["p6"]),
        ([f("material", ["cotton"]), f("color", "Red")], ["p3"]),
    ],
)
def test_what_the_filter_selects_on_googles_side(filters: list[FilterSpec], ids: list[str]) -> None:
    """The strings parse in the stand-in's Retail grammar and select what the Aisle filters mean."""
    from tests.support.google_retail_filter import parse_filter
    from tests.support.google_retail_search import retail_product

    keep = parse_filter(retail_filter(filters))
    assert [p["id"] for p in CATALOG if keep(retail_product(p))] == ids
