"""Which queries a rule fires on, and what a rule may contain."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from aisle.search.rules.book import RuleBook
from aisle.search.rules.model import QueryCondition, Rule, RuleBody

NOW = datetime(2026, 11, 22, tzinfo=UTC)
HIDE = [{"type": "hide", "productIds": ["p1"]}]


@pytest.mark.parametrize(
    ("match", "value", "fires", "silent"),
    [
        ("exact", "Running Shoes", ["running shoes", "RUNNING  shoes!"], ["red running shoes", "running"]),
        (
            "contains",
            "running shoes",
            ["red running shoes", "running shoes for men"],
            ["running shoe", "shoes"],
        ),
        ("contains", "1/2 inch", ['pipe 1/2"', "1/2 in. pipe"], ["1/4 in pipe"]),
        ("prefix", "nik", ["nike shoes", "Nikon"], ["shoes nike"]),
        (
            "regex",
            r"^(red|blue) .*shoes?$",
            ["red running shoes", "blue shoe"],
            ["green shoes", "red shoes men"],
        ),
        ("any", None, ["anything", ""], []),
    ],
)
def test_query_conditions_compare_normalised_queries(
    make_rule: Callable[..., Rule], match: str, value: str | None, fires: list[str], silent: list[str]
) -> None:
    book = RuleBook([make_rule(conditions={"query": {"match": match, "value": value}}, actions=HIDE)])
    for q in fires:
        assert book.fire(q, NOW), q
    for q in silent:
        assert not book.fire(q, NOW), q


def test_rules_fire_in_priority_order_and_disabled_ones_never(make_rule: Callable[..., Rule]) -> None:
    rules = [
        make_rule("b", priority=5, actions=HIDE),
        make_rule("a", priority=5, actions=HIDE),
        make_rule("z", priority=50, actions=HIDE),
        make_rule("off", priority=99, enabled=False, actions=HIDE),
    ]
    assert [r.id for r in RuleBook(rules).fire("x", NOW)] == ["z", "a", "b"]


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        ({"match": "regex", "value": r"(a)\1"}, "invalid regex"),
        ({"match": "regex", "value": r"(?<=a)b"}, "invalid regex"),
        ({"match": "regex", "value": "a" * 300}, "at most"),
        ({"match": "exact"}, "required"),
        ({"match": "contains", "value": "  "}, "required"),
        ({"match": "any", "value": "x"}, "omit it"),
    ],
)
def test_bad_query_conditions_are_refused_with_the_reason(condition: dict[str, str], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        QueryCondition.model_validate(condition)


def test_a_catastrophic_pattern_answers(make_rule: Callable[..., Rule]) -> None:
    """``^(a+)+$`` on 5,000 a's and a b takes 2^5000 steps in a backtracking engine: this test would never
    end. Rules match with RE2 (linear time), so it answers, and correctly both ways."""
    book = RuleBook([make_rule(conditions={"query": {"match": "regex", "value": "^(a+)+$"}}, actions=HIDE)])
    assert not book.fire("a" * 5000 + " b", NOW)
    assert book.fire("a" * 5000, NOW)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"conditions": {"start": "2026-11-27T00:00:00"}}, "timezone"),
        ({"conditions": {"start": "2026-11-27T00:00:00Z", "end": "2026-11-26T00:00:00Z"}}, "after start"),
        (
            {"actions": [{"type": "pin", "items": [{"productId": "a", "position": 0}]}]},
            "greater than or equal",
        ),
        (
            {
                "actions": [
                    {
                        "type": "pin",
                        "items": [{"productId": "a", "position": 1}, {"productId": "b", "position": 1}],
                    }
                ]
            },
            "one product",
        ),
        ({"actions": [{"type": "redirect", "url": "/a"}, {"type": "redirect", "url": "/b"}]}, "at most one"),
        ({"actions": [{"type": "redirect", "url": "javascript:alert(1)"}]}, "http\\(s\\) URL"),
        ({"actions": [{"type": "boost", "condition": [], "weight": 5}]}, "at least 1"),
        (
            {"actions": [{"type": "boost", "condition": [{"field": "brand", "value": "x"}], "weight": -5}]},
            "greater than 0",
        ),
        ({"actions": []}, "at least 1"),
        ({"actions": [{"type": "shuffle"}]}, "does not match any of the expected tags"),
    ],
)
def test_invalid_rules_name_what_is_wrong(body: dict[str, object], message: str) -> None:
    doc = {"name": "r", "actions": HIDE, **body}
    with pytest.raises(ValidationError, match=message):
        RuleBody.model_validate(doc)
