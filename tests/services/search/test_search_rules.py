"""The search service with merchandising rules in storage: fired rules, and changes seen at once."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from aisle.core.config import Settings
from aisle.services.rules.app import create_app as create_rules
from aisle.services.search.app import create_app as create_search

T = {"tenant": "fashion"}


@pytest.fixture(scope="module")
def clients(
    demo_env: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[TestClient, TestClient]]:
    """(search, rules) over one bucket of their own holding a copy of the fashion tenant."""
    bucket = tmp_path_factory.mktemp("search-rules") / "bucket"
    shutil.copytree(
        demo_env.store.local_path("fashion"), bucket / "fashion", ignore=shutil.ignore_patterns("rules")
    )
    settings = Settings(
        storage_url=f"file://{bucket}",
        data_dir=demo_env.data_dir,
        auth="off",
        predict_url="http://127.0.0.1:9",
    )
    with TestClient(create_search(settings)) as search, TestClient(create_rules(settings)) as rules:
        yield search, rules


def search(client: TestClient, query: str, **fields: Any) -> dict[str, Any]:
    r = client.post("/search", json={"query": query, "tenant": "fashion", **fields})
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def test_the_search_service_applies_rule_changes_on_its_next_request(clients: Any) -> None:
    search_client, rules = clients
    before = search(search_client, "running shoes", size=5)
    assert before["queryGraph"]["rules"] == [] and before["redirect"] is None
    rule = {
        "id": "run",
        "name": "Shirt first",
        "conditions": {"query": {"match": "contains", "value": "running shoes"}},
        "actions": [{"type": "pin", "items": [{"productId": "15970", "position": 1}]}],
    }
    assert rules.post("/rules", params=T, json=rule).status_code == 201
    after = search(search_client, "running shoes", size=5)
    assert after["products"][0]["id"] == "15970"
    assert after["queryGraph"]["rules"] == [
        {"id": "run", "name": "Shirt first", "version": 1, "actions": rule["actions"]}
    ]
    replaced = {**rule, "version": 1, "actions": [{"type": "redirect", "url": "/running"}]}
    assert rules.put("/rules/run", params=T, json=replaced).status_code == 200
    after = search(search_client, "running shoes", size=5)
    assert after["redirect"] == "/running" and after["products"][0]["id"] != "15970"
    assert after["queryGraph"]["rules"][0]["version"] == 2
    disabled = {**replaced, "version": 2, "enabled": False}
    assert rules.put("/rules/run", params=T, json=disabled).status_code == 200
    assert search(search_client, "running shoes")["redirect"] is None
    assert rules.delete("/rules/run", params=T).status_code == 204
    assert search(search_client, "running shoes", size=5)["products"] == before["products"]


def test_rules_in_a_search_response(clients: Any) -> None:
    search_client, rules = clients
    rule = {
        "id": "vip-sale",
        "name": "VIP sale",
        "priority": 10,
        "conditions": {"query": {"match": "exact", "value": "sale"}, "userGroup": "vip"},
        "actions": [
            {"type": "rewrite", "query": "nike shoes"},
            {"type": "filter", "filters": [{"field": "gender", "value": "Men"}]},
            {"type": "redirect", "url": "https://shop.example/vip-sale"},
        ],
    }
    assert rules.post("/rules", params=T, json=rule).status_code == 201
    try:
        body = search(search_client, "Sale", userGroup="vip", facets=["gender"])
        graph = body["queryGraph"]
        assert graph["original"] == "Sale" and graph["normalized"] == "nike shoes"
        assert body["redirect"] == "https://shop.example/vip-sale"
        assert {"field": "gender", "values": ["Men"], "range": None, "source": "rule"} in graph["filters"]
        assert body["total"] > 0 and all(p["brand"] == "Nike" for p in body["products"][:5])
        assert [f["value"] for f in body["facets"]["gender"]] == ["Men"]
        assert search(search_client, "Sale")["queryGraph"]["rules"] == []  # not a VIP: no rule
    finally:
        rules.delete("/rules/vip-sale", params=T)


def _same_answer(page: dict[str, Any]) -> dict[str, Any]:
    """A response without its timing (``queryGraph.tookMs`` differs between any two searches; the
    rules service has always spelled it ``took_ms``) and its attribution token (a live answer's own;
    a preview is shown to no shopper and has none)."""
    graph = {k: v for k, v in page["queryGraph"].items() if k not in ("tookMs", "took_ms")}
    return {**{k: v for k, v in page.items() if k != "attributionToken"}, "queryGraph": graph}


@pytest.mark.parametrize(
    "asked",
    [
        {"query": "running shoes", "size": 10, "facets": ["brand", "color"]},
        {"query": "sports shoes", "from": 20, "size": 10},
        {"query": "running", "userGroup": "vip", "filters": [{"field": "gender", "value": "Women"}]},
    ],
)
def test_the_rules_service_preview_answers_what_the_search_service_answers(
    clients: Any, asked: dict[str, Any]
) -> None:
    """Over HTTP, both services on one bucket: the preview's "without" page is POST /search now, and
    its "with" page POST /search once the rule is saved (issue 27: the preview ran a pipeline of its own)."""
    search_client, rules = clients
    rule = {
        "name": "Nike first",
        "conditions": {"query": {"match": "any"}},
        "appliesToAllQueries": True,
        "actions": [{"type": "boost", "condition": [{"field": "brand", "value": "Nike"}], "weight": 40}],
    }
    preview = rules.post("/rules/preview", params=T, json={"search": asked, "rule": rule})
    assert preview.status_code == 200, preview.text
    live = search(search_client, **asked)
    assert live["products"], asked  # a page to compare
    assert _same_answer(preview.json()["withoutRule"]) == _same_answer(live)
    assert rules.post("/rules", params=T, json={**rule, "id": "nike-first"}).status_code == 201
    try:
        with_rule = preview.json()["withRule"]
        saved = search(search_client, **asked)
        assert [p["id"] for p in with_rule["products"]] == [p["id"] for p in saved["products"]]
        assert with_rule["total"] == saved["total"] and with_rule["facets"] == saved["facets"]
        assert with_rule["products"] != live["products"]  # the rule changed the page
    finally:
        assert rules.delete("/rules/nike-first", params=T).status_code == 204
