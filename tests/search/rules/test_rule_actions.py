"""What a merchandiser sees when rules fire: pins, hides, boosts, buries, filters, rewrites, redirects."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from aisle.search.model import SearchResult
from aisle.search.rules.model import Rule

NOW_DELTA = timedelta(days=1)
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)  # the clock of the ``search`` fixture
Q = {"match": "contains", "value": "running shoes"}


def ids(result: SearchResult) -> list[str]:
    return [p["id"] for p in result.products]


def test_a_pinned_product_appears_at_its_position(search: Any, make_rule: Callable[..., Rule]) -> None:
    base = search("running shoes", size=10)
    outsider = "15970"  # a shirt: not in the match set of "running shoes"
    assert outsider not in ids(base)
    inside = ids(base)[6]
    rule = make_rule(
        conditions={"query": Q},
        actions=[
            {
                "type": "pin",
                "items": [{"productId": outsider, "position": 1}, {"productId": inside, "position": 3}],
            }
        ],
    )
    res = search("running shoes", [rule], size=10)
    assert ids(res)[0] == outsider and ids(res)[2] == inside
    assert len(ids(res)) == 10 and len(set(ids(res))) == 10  # no duplicates, page still full
    assert res.total == base.total + 1  # the outsider was not a match; the inside pin is counted once
    # the products the pins displaced follow in their order
    organic = [i for i in ids(base) if i != inside]
    assert [i for i in ids(res) if i not in (outsider, inside)] == organic[:8]


def test_pins_respect_the_page_they_fall_on(search: Any, make_rule: Callable[..., Rule]) -> None:
    base = search("running shoes", size=30)
    pinned = ids(base)[25]
    rule = make_rule(
        conditions={"query": Q}, actions=[{"type": "pin", "items": [{"productId": pinned, "position": 7}]}]
    )
    page1 = search("running shoes", [rule], size=5)
    page2 = search("running shoes", [rule], size=5, offset=5)
    page3 = search("running shoes", [rule], size=5, offset=10)
    assert pinned not in ids(page1)
    assert ids(page2)[1] == pinned  # position 7 = second product of the second page
    full = ids(page1) + ids(page2) + ids(page3)
    assert len(set(full)) == 15
    expected = [i for i in ids(base) if i != pinned][:14]
    expected.insert(6, pinned)
    assert full == expected
    assert page2.total == base.total


def test_a_pin_past_the_end_lands_at_the_end(search: Any, make_rule: Callable[..., Rule]) -> None:
    base = search("reebok running shoes", size=100)
    n = base.total
    assert 0 < n < 90
    rule = make_rule(
        conditions={"query": {"match": "any"}},
        actions=[{"type": "pin", "items": [{"productId": "15970", "position": 500}]}],
    )
    res = search("reebok running shoes", [rule], size=100)
    assert ids(res)[-1] == "15970" and res.total == n + 1


def test_a_hidden_product_never_appears_and_is_not_counted(
    search: Any, make_rule: Callable[..., Rule]
) -> None:
    base = search("running shoes", size=20, facets=["brand"])
    hidden = ids(base)[0]
    brand = base.products[0]["brand"]
    rule = make_rule(
        conditions={"query": Q},
        actions=[
            {"type": "hide", "productIds": [hidden]},
            {"type": "pin", "items": [{"productId": hidden, "position": 2}]},  # hide wins over pin
        ],
    )
    res = search("running shoes", [rule], size=100, facets=["brand"])
    assert hidden not in ids(res)
    assert res.total == base.total - 1
    count = {f.value: f.count for f in res.facets["brand"]}
    before = {f.value: f.count for f in base.facets["brand"]}
    assert count.get(brand, 0) == before[brand] - 1
    # and through every retrieval stage: a typo query still never shows it
    assert hidden not in ids(
        search("runing shoes", [make_rule(actions=[{"type": "hide", "productIds": [hidden]}])], size=100)
    )


def test_a_boost_moves_matching_products_up_and_a_bury_down(
    search: Any, make_rule: Callable[..., Rule]
) -> None:
    base = search("running shoes", size=40)
    last_brand = base.products[-1]["brand"]
    first_brand = base.products[0]["brand"]
    assert last_brand != first_brand
    boost = make_rule(
        conditions={"query": Q},
        actions=[{"type": "boost", "condition": [{"field": "brand", "value": last_brand}], "weight": 100}],
    )
    res = search("running shoes", [boost], size=40)
    assert res.products[0]["brand"] == last_brand
    assert res.total == base.total  # a boost reorders, it does not filter
    bury = make_rule(
        conditions={"query": Q},
        actions=[{"type": "bury", "condition": [{"field": "brand", "value": first_brand}], "weight": 100}],
    )
    res = search("running shoes", [bury], size=base.total)
    brands = [p["brand"] for p in res.products]
    first_buried = brands.index(first_brand)
    assert all(b == first_brand for b in brands[first_buried:])  # every buried product sorts after the rest


def test_a_filter_rule_restricts_results_and_shows_in_the_query_graph(
    search: Any, make_rule: Callable[..., Rule]
) -> None:
    rule = make_rule(
        conditions={"query": Q},
        actions=[{"type": "filter", "filters": [{"field": "gender", "value": "Women"}]}],
    )
    res = search("running shoes", [rule], size=20, facets=["gender"])
    assert res.total > 0 and all(p["gender"] == "Women" for p in res.products)
    assert [f.value for f in res.facets["gender"]] == ["Women"]
    applied = [f for f in res.query_graph.filters if f.source == "rule"]
    assert applied and applied[0].field == "gender" and applied[0].values == ["Women"]


def test_a_rewrite_changes_results_and_shows_in_the_query_graph(
    search: Any, make_rule: Callable[..., Rule]
) -> None:
    rule = make_rule(
        "sneaker-rewrite",
        conditions={"query": {"match": "exact", "value": "Kicks!"}},
        actions=[{"type": "rewrite", "query": "sports shoes"}],
    )
    base = search("kicks")
    res = search("kicks", [rule])
    assert base.total == 0 or set(ids(base)) != set(ids(res))
    assert res.total > 0 and res.query_graph.original == "kicks"
    assert res.query_graph.normalized == "sports shoes"
    fired = res.query_graph.rules
    assert fired == [
        {
            "id": "sneaker-rewrite",
            "name": "sneaker-rewrite",
            "version": 1,
            "actions": [{"type": "rewrite", "query": "sports shoes"}],
        }
    ]


def test_a_redirect_is_returned(search: Any, make_rule: Callable[..., Rule]) -> None:
    rule = make_rule(
        conditions={"query": {"match": "prefix", "value": "sale"}},
        actions=[{"type": "redirect", "url": "/sale"}],
    )
    assert search("sale shoes", [rule]).redirect == "/sale"
    assert search("shoes on sale", [rule]).redirect is None


def test_disabled_and_out_of_window_rules_do_not_fire(search: Any, make_rule: Callable[..., Rule]) -> None:
    redirect = [{"type": "redirect", "url": "/sale"}]
    disabled = make_rule("off", enabled=False, actions=redirect)
    assert search("shoes", [disabled]).redirect is None
    scheduled = make_rule("later", conditions={"start": NOW + NOW_DELTA}, actions=redirect)
    expired = make_rule("over", conditions={"end": NOW}, actions=redirect)  # the end is exclusive
    assert search("shoes", [scheduled, expired]).redirect is None
    assert search("shoes", [scheduled], now=NOW + NOW_DELTA).redirect == "/sale"
    assert search("shoes", [expired], now=NOW - NOW_DELTA).redirect == "/sale"


def test_user_group_targeting(search: Any, make_rule: Callable[..., Rule]) -> None:
    vip = make_rule("vip", conditions={"userGroup": "vip"}, actions=[{"type": "redirect", "url": "/vip"}])
    assert search("shoes", [vip], user_group="vip").redirect == "/vip"
    assert search("shoes", [vip], user_group="new").redirect is None
    assert search("shoes", [vip]).redirect is None


def test_higher_priority_wins_and_every_fired_rule_is_listed(
    search: Any, make_rule: Callable[..., Rule]
) -> None:
    low = make_rule("low", priority=1, actions=[{"type": "redirect", "url": "/low"}])
    high = make_rule("high", priority=9, actions=[{"type": "redirect", "url": "/high"}])
    res = search("shoes", [low, high])
    assert res.redirect == "/high"
    assert [r["id"] for r in res.query_graph.rules] == ["high", "low"]
    assert search("shoes").query_graph.rules == []


def test_two_rules_pinning_one_position(search: Any, make_rule: Callable[..., Rule]) -> None:
    def pin(product: str) -> list[dict[str, Any]]:
        return [{"type": "pin", "items": [{"productId": product, "position": 1}]}]

    first = make_rule("first", priority=9, actions=pin("15970"))
    second = make_rule("second", priority=1, actions=pin("1164"))
    res = search("running shoes", [second, first], size=5)
    assert ids(res)[:2] == ["15970", "1164"]
