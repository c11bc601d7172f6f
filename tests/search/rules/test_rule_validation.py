"""A rule checked against the tenant: attributes, user groups, product ids."""

from __future__ import annotations

from typing import Any

import pytest

from aisle.core.tenancy import TenantConfig
from aisle.search.index.reader import TenantIndex
from aisle.search.model import FilterSpec
from aisle.search.rules.model import RuleBody
from aisle.search.rules.validation import RuleInvalid, validate_rule


def body(**fields: Any) -> RuleBody:
    return RuleBody.model_validate({"name": "r", **fields})


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        (
            {"conditions": {"userGroup": "gold"}, "actions": [{"type": "redirect", "url": "/x"}]},
            "conditions.userGroup",
            "unknown user group 'gold' (known: vip, new)",
        ),
        (
            {"actions": [{"type": "boost", "condition": [{"field": "colour", "value": "Red"}]}]},
            "actions.0.condition.0.field",
            "'colour' is not an attribute",
        ),
        (
            {
                "actions": [
                    {"type": "redirect", "url": "/x"},
                    {"type": "bury", "condition": [{"field": "title", "value": "x"}]},
                ]
            },
            "actions.1.condition.0.field",
            "'title' is not filterable",
        ),
        (
            {"actions": [{"type": "filter", "filters": [{"field": "price", "value": "cheap"}]}]},
            "actions.0.filters.0.value",
            "takes numbers",
        ),
    ],
)
def test_problems_name_the_field(
    fashion: tuple[TenantIndex, TenantConfig], fields: dict[str, Any], field: str, message: str
) -> None:
    index, config = fashion
    with pytest.raises(RuleInvalid) as err:
        validate_rule(body(**fields), config, index)
    assert err.value.status == 400 and err.value.code == "rule_invalid"
    assert err.value.details[0]["field"] == field and message in err.value.details[0]["message"]


def test_unknown_product_ids_are_warnings(fashion: tuple[TenantIndex, TenantConfig]) -> None:
    index, config = fashion
    rule = body(
        conditions={"userGroup": "vip"},
        actions=[
            {
                "type": "pin",
                "items": [{"productId": "15970", "position": 1}, {"productId": "nope", "position": 2}],
            },
            {"type": "hide", "productIds": ["gone"]},
            {
                "type": "boost",
                "condition": [{"field": "brand", "value": "nike"}, {"field": "price", "value": {"lt": 2000}}],
            },
        ],
    )
    warnings = validate_rule(rule, config, index)
    assert [w.field for w in warnings] == ["actions.0.items.1.productId", "actions.1.productIds.0"]
    assert validate_rule(rule, config, None) == []  # without a catalog, ids cannot be checked


def test_pins_respect_the_shoppers_filters(search: Any, make_rule: Any) -> None:
    rule = make_rule(
        actions=[{"type": "pin", "items": [{"productId": "15970", "position": 1}]}]
    )  # a Men's shirt
    women = search("shirt", [rule], filters=[FilterSpec(field="gender", value="Women")])
    assert "15970" not in [p["id"] for p in women.products]
    men = search("shirt", [rule], filters=[FilterSpec(field="gender", value="Men")])
    assert men.products[0]["id"] == "15970"
