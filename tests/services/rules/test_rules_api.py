"""The rule management service through its HTTP API (ASGI)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

T = {"tenant": "fashion"}
HIDE = [{"type": "hide", "productIds": ["15970"]}]


def rule(**fields: Any) -> dict[str, Any]:
    return {
        "name": "Running shoes",
        "conditions": {"query": {"match": "contains", "value": "running shoes"}},
        "actions": HIDE,
        **fields,
    }


def test_create_get_replace_delete(client: TestClient) -> None:
    r = client.post("/rules", params=T, json=rule(id="run"))
    assert r.status_code == 201, r.text
    created = r.json()["rule"]
    assert created["id"] == "run" and created["version"] == 1 and r.json()["warnings"] == []
    assert r.headers["etag"] == '"1"'
    got = client.get("/rules/run", params=T)
    assert got.json() == created and got.headers["etag"] == '"1"'
    r = client.put("/rules/run", params=T, json=rule(name="Renamed", version=1))
    assert r.status_code == 200 and r.json()["rule"]["version"] == 2 and r.json()["rule"]["name"] == "Renamed"
    r = client.put("/rules/run", params=T, json=rule(name="By header"), headers={"If-Match": '"2"'})
    assert r.status_code == 200 and r.json()["rule"]["version"] == 3
    assert client.delete("/rules/run", params={**T, "version": 3}).status_code == 204
    r = client.get("/rules/run", params=T)
    assert r.status_code == 404 and r.json()["error"]["code"] == "rule_not_found"
    assert client.post("/rules", params=T, json=rule(id="run")).json()["rule"]["version"] == 5


def test_a_stale_version_gets_409_and_changes_nothing(client: TestClient) -> None:
    client.post("/rules", params=T, json=rule(id="promo"))
    assert client.put("/rules/promo", params=T, json=rule(name="First edit", version=1)).status_code == 200
    r = client.put("/rules/promo", params=T, json=rule(name="Stale edit", version=1))
    assert r.status_code == 409
    error = r.json()["error"]
    assert error["code"] == "rule_version_conflict" and error["details"]["currentVersion"] == 2
    current = client.get("/rules/promo", params=T).json()
    assert current["name"] == "First edit" and current["version"] == 2
    r = client.delete("/rules/promo", params=T, headers={"If-Match": '"1"'})
    assert r.status_code == 409 and client.get("/rules/promo", params=T).status_code == 200
    r = client.put("/rules/promo", params=T, json=rule())  # no version at all
    assert r.status_code == 400 and "version" in r.json()["error"]["message"]
    assert client.post("/rules", params=T, json=rule(id="promo")).json()["error"]["code"] == "rule_exists"


def test_validation_errors_name_the_field(client: TestClient) -> None:
    bad_field = rule(
        actions=[{"type": "boost", "condition": [{"field": "colour", "value": "Red"}], "weight": 10}]
    )
    r = client.post("/rules", params=T, json=bad_field)
    assert r.status_code == 400
    assert r.json()["error"]["message"].startswith(
        "actions.0.condition.0.field: 'colour' is not an attribute"
    )
    query = {"match": "contains", "value": "running shoes"}
    r = client.post("/rules", params=T, json=rule(conditions={"query": query, "userGroup": "gold"}))
    assert (
        r.status_code == 400
        and "conditions.userGroup: unknown user group 'gold'" in r.json()["error"]["message"]
    )
    r = client.post(
        "/rules", params=T, json=rule(conditions={"query": {"match": "regex", "value": "(a)\\1"}})
    )
    assert r.status_code == 400 and r.json()["error"]["message"].startswith("body.conditions.query.value:")
    r = client.post("/rules", params=T, json=rule(conditions={"start": "2026-12-01T00:00:00"}))
    assert r.status_code == 400 and "timezone" in r.json()["error"]["message"]
    assert client.get("/rules", params=T).json()["total"] == 0  # nothing was stored


def test_unknown_product_ids_are_accepted_with_a_warning(client: TestClient) -> None:
    pins = [
        {
            "type": "pin",
            "items": [{"productId": "15970", "position": 1}, {"productId": "no-such", "position": 2}],
        }
    ]
    r = client.post("/rules", params=T, json=rule(actions=pins))
    assert r.status_code == 201
    assert r.json()["warnings"] == [
        {
            "field": "actions.0.items.1.productId",
            "message": "product 'no-such' is not in the catalog; it will not be shown",
        }
    ]


def test_list_is_paginated_and_filters_by_enabled(client: TestClient) -> None:
    for n in range(5):
        client.post("/rules", params=T, json=rule(id=f"r{n}", priority=n, enabled=n % 2 == 0))
    page = client.get("/rules", params={**T, "limit": 2}).json()
    assert [r["id"] for r in page["rules"]] == ["r4", "r3"] and page["total"] == 5
    page = client.get("/rules", params={**T, "limit": 2, "offset": 4}).json()
    assert [r["id"] for r in page["rules"]] == ["r0"]
    enabled = client.get("/rules", params={**T, "enabled": "true"}).json()
    assert [r["id"] for r in enabled["rules"]] == ["r4", "r2", "r0"]
    assert client.get("/rules", params={**T, "limit": 0}).status_code == 422


def test_preview_shows_both_result_lists_and_what_changed(client: TestClient) -> None:
    search = {"query": "running shoes", "size": 5}
    base = client.post(
        "/rules/preview",
        params=T,
        json={"search": search, "rule": rule(actions=[{"type": "redirect", "url": "/x"}])},
    )
    assert base.status_code == 200, base.text
    top = [p["id"] for p in base.json()["withoutRule"]["products"]]
    draft = rule(
        actions=[
            {"type": "hide", "productIds": [top[0]]},
            {"type": "pin", "items": [{"productId": "15970", "position": 3}]},
        ]
    )
    r = client.post("/rules/preview", params=T, json={"search": search, "rule": draft})
    body = r.json()
    assert [p["id"] for p in body["withoutRule"]["products"]] == top
    after = [p["id"] for p in body["withRule"]["products"]]
    assert after[2] == "15970" and top[0] not in after
    changes = body["changes"]
    assert changes["fired"] is True
    assert "15970" in changes["added"] and top[0] in changes["removed"]
    assert {"id": top[1], "before": 2, "after": 1} in changes["moved"]
    assert changes["totalAfter"] == changes["totalBefore"]  # one hidden, one outsider pinned
    assert body["withRule"]["queryGraph"]["rules"][0]["id"] == "draft"
    assert client.get("/rules", params=T).json()["total"] == 0  # a preview stores nothing


def test_preview_of_a_stored_rule_at_a_chosen_time(client: TestClient) -> None:
    client.post(
        "/rules",
        params=T,
        json=rule(
            id="black-friday",
            conditions={"start": "2026-11-27T00:00:00Z"},
            actions=[{"type": "redirect", "url": "/bf"}],
            appliesToAllQueries=True,  # every search redirects from Black Friday on: confirmed
        ),
    )
    search = {"query": "shoes", "size": 3}
    early = client.post(
        "/rules/preview",
        params=T,
        json={"search": search, "ruleId": "black-friday", "at": "2026-11-01T00:00:00Z"},
    )
    assert early.json()["changes"]["fired"] is False
    on_time = client.post(
        "/rules/preview",
        params=T,
        json={"search": search, "ruleId": "black-friday", "at": "2026-11-27T10:00:00Z"},
    )
    changes = on_time.json()["changes"]
    assert (
        changes["fired"] is True and changes["redirectBefore"] is None and changes["redirectAfter"] == "/bf"
    )
    # neither a rule nor a ruleId (an editor whose rule has no action yet): the live page on both sides
    r = client.post("/rules/preview", params=T, json={"search": search})
    assert r.status_code == 200 and r.json()["changes"]["fired"] is False
    assert r.json()["withoutRule"]["products"] == r.json()["withRule"]["products"]


def test_health_docs_and_errors(client: TestClient) -> None:
    assert client.get("/health").json()["service"] == "rules"
    assert client.get("/docs").status_code == 200
    schema = client.get("/openapi.json").json()
    assert {"/rules", "/rules/{rule_id}", "/rules/preview"} <= set(schema["paths"])
    assert "PinAction" in schema["components"]["schemas"]
    r = client.get("/rules", params={"tenant": "nowhere"})
    assert r.status_code == 404 and r.json()["error"]["code"] == "tenant_not_found"
    assert "server-timing" in r.headers


def test_auth_is_wired(settings: Any) -> None:
    from tests.support.auth import AuthKit

    from aisle.core.storage import open_blob_store
    from aisle.services.rules.app import create_app

    kit = AuthKit(open_blob_store(settings.storage_url))
    app = create_app(kit.settings(storage_url=settings.storage_url, data_dir=settings.data_dir))
    reader = {"authorization": f"Bearer {kit.token(['fashion'], scopes=['search:read'])}"}
    writer = {"authorization": f"Bearer {kit.token(['fashion'], scopes=['search:read', 'rules:write'])}"}
    other = {"authorization": f"Bearer {kit.token(['homedepot'], scopes=['search:read', 'rules:write'])}"}
    with TestClient(app) as c:
        assert c.get("/rules", params=T).status_code == 401
        assert c.get("/rules", params=T, headers=reader).status_code == 200
        assert c.post("/rules", params=T, json=rule(), headers=reader).status_code == 403
        assert c.post("/rules", params=T, json=rule(), headers=other).status_code == 403
        assert c.post("/rules", params=T, json=rule(), headers=writer).status_code == 201
        assert c.get("/health").status_code == 200


@pytest.mark.parametrize(
    "url",
    [
        "https://\u0096",
        "//evil.example",
        "/\\evil.example",
        "javascript:alert(1)",
        "https://u:p@shop.example",
    ],
)
def test_redirects_go_to_a_site_path_or_an_http_url_with_a_host(client: TestClient, url: str) -> None:
    r = client.post("/rules", params=T, json=rule(actions=[{"type": "redirect", "url": url}]))
    assert r.status_code == 400 and r.json()["error"]["code"] == "value_invalid", r.text
    assert r.json()["error"]["message"].startswith("body.actions.0.redirect.url")
    for good in ("/sale/shoes", "https://shop.example/sale?x=1"):
        saved = client.post("/rules", params=T, json=rule(actions=[{"type": "redirect", "url": good}]))
        assert saved.status_code == 201, saved.text
        client.delete(f"/rules/{saved.json()['rule']['id']}", params=T)


@pytest.mark.parametrize("query", ["   ", "a\u0000b", "x" * 257])
def test_rewrites_are_bounded_visible_text(client: TestClient, query: str) -> None:
    r = client.post("/rules", params=T, json=rule(actions=[{"type": "rewrite", "query": query}]))
    assert r.status_code == 422


def test_a_rule_on_every_query_needs_confirming(client: TestClient) -> None:
    takeover = {"name": "everything", "actions": [{"type": "redirect", "url": "/sale"}]}
    r = client.post("/rules", params=T, json=takeover)
    assert r.status_code == 400 and r.json()["error"]["code"] == "rule_matches_every_query"
    assert client.get("/rules", params=T).json()["total"] == 0
    preview = client.post("/rules/preview", params=T, json={"search": {"query": "shoes"}, "rule": takeover})
    assert preview.status_code == 200 and preview.json()["changes"]["redirectAfter"] == "/sale"
    confirmed = client.post("/rules", params=T, json={**takeover, "appliesToAllQueries": True})
    assert confirmed.status_code == 201
    stored = confirmed.json()["rule"]
    assert stored["appliesToAllQueries"] is True
    assert client.put(f"/rules/{stored['id']}", params=T, json=stored).status_code == 200


@pytest.mark.parametrize("value", [1e20, 9223372036854775807, {"lt": 1e300}])
def test_rule_and_preview_numbers_beyond_2_53_are_400(client: TestClient, value: object) -> None:
    action = {"type": "filter", "filters": [{"field": "year", "value": value}]}
    r = client.post("/rules", params=T, json=rule(actions=[action]))
    assert r.status_code == 400 and "2^53" in r.json()["error"]["message"]
    preview = {"search": {"query": "shoes", "filters": [{"field": "year", "value": value}]}, "rule": rule()}
    assert client.post("/rules/preview", params=T, json=preview).status_code == 400


def test_version_history_keeps_every_version_and_tombstones(client: TestClient) -> None:
    client.post("/rules", params=T, json=rule(id="hist", name="one"))
    client.put("/rules/hist", params=T, json={**rule(name="two"), "version": 1})
    client.delete("/rules/hist", params={**T, "version": 2})
    r = client.get("/rules/hist/versions", params=T)
    assert r.status_code == 200
    versions = r.json()["versions"]
    assert [(v["version"], v["deleted"]) for v in versions] == [(3, True), (2, False), (1, False)]
    assert [v["rule"]["name"] for v in versions[1:]] == ["two", "one"] and versions[0]["rule"] is None
    missing = client.get("/rules/never/versions", params=T)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "rule_not_found"
