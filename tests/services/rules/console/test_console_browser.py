"""The console in real Chromium: sign in, author a rule in the form, preview it, pin by dragging, a 409
and its recovery, a read-only token. Screenshots of the main pages go to ``conftest.SHOTS``."""

from __future__ import annotations

import json
from typing import Any

import httpx
from tests.services.rules.console.conftest import SEED, ConsoleEnv, shot, sign_in
from tests.support.recs import register_and_deploy

from aisle.core.storage import open_blob_store
from aisle.recs.models.base import ModelType


def rule(env: ConsoleEnv, rule_id: str) -> httpx.Response:
    return httpx.get(
        f"{env.console}/rules/{rule_id}",
        params={"tenant": "fashion"},
        headers={"authorization": f"Bearer {env.full_token}"},
    )


def cards(page: Any, column: str) -> list[str]:
    return page.eval_on_selector_all(
        f"[data-testid={column}] .pcard", "els => els.map(e => e.dataset.productId)"
    )


def test_author_a_rule_preview_it_and_pin_by_dragging(console_env: ConsoleEnv, page: Any) -> None:
    page.goto(console_env.console + "/")
    assert page.url.endswith("/console/login")
    shot(page, "00-sign-in")
    sign_in(page, console_env, console_env.full_token)
    shot(page, "01-rules-empty")
    page.click("[data-testid=new-rule]")
    page.fill("#name", "Puma first on shoes")
    page.fill("#new_id", "puma-shoes")
    page.select_option("#q_match", "contains")
    page.fill("#q_value", "shoes")
    page.click("[data-testid=add-boost]")
    block = page.locator(".action[data-action-type=boost]")
    block.locator("select").select_option("brand")
    block.locator("input[aria-label=value]").fill("Puma")
    block.locator("input[aria-label=weight]").fill("500")
    page.fill("input[aria-label='preview query']", "shoes")
    page.click("[data-testid=preview]")
    page.wait_for_selector("[data-testid=fired]")
    assert "rule fires" in page.inner_text("[data-testid=fired]")
    before, after = cards(page, "without"), cards(page, "with")
    assert after and before != after
    brands = page.eval_on_selector_all(
        "[data-testid=with] .pcard .m", "els => els.slice(0, 3).map(e => e.textContent)"
    )
    assert len(brands) == 3 and all("Puma" in b for b in brands), brands
    shot(page, "02-editor-preview")

    # drag the 6th product of the "with" column onto position 1: a pin action appears and the preview follows
    dragged = after[5]
    page.drag_and_drop(
        f"[data-testid=with] .pcard[data-product-id='{dragged}']",
        "[data-testid=with] .pcard[data-position='1']",
    )
    page.wait_for_function(
        "id => document.querySelector('[data-testid=with] .pcard')?.dataset.productId === id", arg=dragged
    )
    pin = page.locator(".action[data-action-type=pin] .pin-row").first
    assert pin.locator("input").nth(0).input_value() == dragged
    assert pin.locator("input").nth(1).input_value() == "1"
    shot(page, "03-pinned-by-drag")

    page.click("[data-testid=save]")
    page.wait_for_selector("text=Saved as version 1")
    stored = rule(console_env, "puma-shoes").json()
    assert stored["conditions"]["query"] == {"match": "contains", "value": "shoes"}
    assert {a["type"] for a in stored["actions"]} == {"boost", "pin"}
    assert {"productId": dragged, "position": 1} in next(a for a in stored["actions"] if a["type"] == "pin")[
        "items"
    ]
    page.goto(console_env.console + "/console/fashion/rules")
    assert page.is_visible("#rule-puma-shoes")
    shot(page, "04-rules-list")


def test_a_concurrent_edit_is_a_409_with_reload_and_retry(console_env: ConsoleEnv, page: Any) -> None:
    headers = {"authorization": f"Bearer {console_env.full_token}"}
    body = {
        "name": "Red dresses",
        "conditions": {"query": {"match": "contains", "value": "dress"}},
        "actions": [{"type": "boost", "condition": [{"field": "color", "value": "Red"}], "weight": 30}],
    }
    created = httpx.post(
        f"{console_env.console}/rules",
        params={"tenant": "fashion"},
        json={**body, "id": "red"},
        headers=headers,
    )
    assert created.status_code == 201, created.text
    sign_in(page, console_env, console_env.full_token)
    page.goto(console_env.console + "/console/fashion/rules/red")
    # someone else saves version 2 meanwhile
    other = httpx.put(
        f"{console_env.console}/rules/red",
        params={"tenant": "fashion"},
        json={**body, "name": "Red dresses (colleague)", "version": 1},
        headers=headers,
    )
    assert other.status_code == 200
    page.fill("#name", "Red dresses first")
    page.click("[data-testid=save]")
    page.wait_for_selector("[data-testid=conflict]")
    assert "409" in page.inner_text("[data-testid=conflict]")
    assert page.input_value("#name") == "Red dresses first"
    assert rule(console_env, "red").json()["name"] == "Red dresses (colleague)"
    shot(page, "05-conflict")
    page.click("[data-testid=retry]")
    page.wait_for_selector("text=Saved as version 3")
    assert rule(console_env, "red").json()["name"] == "Red dresses first"
    page.goto(console_env.console + "/console/fashion/rules/red/history")
    assert "colleague" in page.inner_text("[data-testid=diff]")
    shot(page, "06-history")


def test_read_only_token_sees_no_edit_controls_and_a_forged_edit_is_refused(
    console_env: ConsoleEnv, page: Any
) -> None:
    headers = {"authorization": f"Bearer {console_env.full_token}"}
    body = {
        "id": "ro",
        "name": "Sale redirect",
        "conditions": {"query": {"match": "exact", "value": "sale"}},
        "actions": [{"type": "redirect", "url": "/sale"}],
    }
    httpx.post(f"{console_env.console}/rules", params={"tenant": "fashion"}, json=body, headers=headers)
    sign_in(page, console_env, console_env.read_only_token)
    assert page.is_visible("[data-testid=read-only]")
    assert page.locator("[data-testid=new-rule]").count() == 0
    assert page.locator("[data-testid^=toggle-]").count() == 0
    page.goto(console_env.console + "/console/fashion/rules/ro")
    assert page.locator("[data-testid=save]").count() == 0
    assert page.locator("[data-testid^=add-]").count() == 0
    assert page.is_disabled("#name")
    shot(page, "07-read-only")
    # a forged save from the signed-in page (valid CSRF token): the rules API refuses it
    status, text = page.evaluate(
        """async () => {
            const csrf = document.querySelector('input[name=csrf]').value;
            const form = new URLSearchParams({csrf, rule_id: 'ro', version: '1', name: 'hacked',
                q_match: 'exact', q_value: 'sale', act: 'k', ak_type: 'redirect', ak_url: '/x'});
            const r = await fetch('/console/fashion/rules/save', {method: 'POST', body: form});
            return [r.status, await r.text()];
        }"""
    )
    assert "insufficient_scope" in text or "rules:write" in text, (status, text[:400])
    assert rule(console_env, "ro").json()["name"] == "Sale redirect"
    direct = httpx.put(
        f"{console_env.console}/rules/ro",
        params={"tenant": "fashion"},
        json={**body, "name": "hacked", "version": 1},
        headers={"authorization": f"Bearer {console_env.read_only_token}"},
    )
    assert direct.status_code == 403


def brands_of(env: ConsoleEnv, ids: list[str]) -> set[str]:
    headers = {"authorization": f"Bearer {env.full_token}"}
    out = set()
    for pid in ids:
        item = httpx.get(f"{env.search}/item/{pid}", params={"tenant": "fashion"}, headers=headers).json()
        out.add(item["brand"])
    return out


def test_author_a_recommendation_filter_and_predict_honours_it(console_env: ConsoleEnv, page: Any) -> None:
    env = console_env
    headers = {"authorization": f"Bearer {env.full_token}"}
    ask = {"containerId": "pdp", "productIds": [SEED]}
    before = httpx.post(
        f"{env.search}/recommendations", params={"tenant": "fashion"}, json=ask, headers=headers
    )
    ids_before = [i["id"] for i in before.json()["response_data"]]
    assert len(brands_of(env, ids_before)) > 1
    brand = sorted(brands_of(env, ids_before))[0]

    sign_in(page, env, env.full_token)
    page.click("nav >> text=Containers")
    page.click("text=Product page")
    page.click("[data-testid=add-rec-filter]")
    rule = page.locator("#rules-editor .action").first
    rule.locator("input[aria-label='condition field']").fill("brand")
    rule.locator("input[aria-label='condition field']").dispatch_event("change")
    rule.locator("input[aria-label='condition value']").fill(brand)
    rule.locator("input[aria-label='condition value']").dispatch_event("change")
    page.fill("input[aria-label='seed product']", SEED)
    page.click("[data-testid=rec-preview]")
    page.wait_for_selector("[data-testid=rec-with] .pcard")
    with_ids = page.eval_on_selector_all(
        "[data-testid=rec-with] .pcard", "els => els.map(e => e.dataset.productId)"
    )
    assert with_ids and brands_of(env, with_ids) == {brand}
    shot(page, "08-container-rules")
    page.click("[data-testid=save-container]")
    page.wait_for_selector("text=Saved as version 2")

    stored = httpx.get(f"{env.edit}/containers/pdp", params={"tenant": "fashion"}, headers=headers).json()
    assert stored["recommendationRules"] == [
        {
            "type": "FILTER",
            "weight": 1.0,
            "condition": {"op": "eq", "field": "brand", "value": brand},
            "slotConfigId": None,
        }
    ] or stored["recommendationRules"][0]["condition"] == {"op": "eq", "field": "brand", "value": brand}
    after = httpx.post(
        f"{env.search}/recommendations", params={"tenant": "fashion"}, json=ask, headers=headers
    )
    ids_after = [i["id"] for i in after.json()["response_data"]]
    assert ids_after and brands_of(env, ids_after) == {brand}
    # predict itself, called directly, applies the container's saved rules too: the same list
    direct = httpx.post(f"{env.predict}/predict", params={"tenant": "fashion"}, json=ask, headers=headers)
    assert [i["id"] for i in direct.json()["response_data"]] == ids_after


def test_containers_models_and_a_deploy_job(console_env: ConsoleEnv, page: Any) -> None:
    sign_in(page, console_env, console_env.full_token)
    page.goto(console_env.console + "/console/fashion/containers")
    assert page.is_visible("text=also-viewed")
    shot(page, "09-containers")
    store = open_blob_store(console_env.settings.storage_url)
    register_and_deploy(store, "fashion", "viewed-next", ModelType.CUSTOMERS_ALSO_VIEW, deploy=False)
    page.goto(console_env.console + "/console/fashion/models")
    # deployed and serving the pdp container: neither deploying it again nor undeploying it is offered
    assert page.is_disabled("[data-testid=deploy-also-viewed]")
    assert page.is_disabled("[data-testid=undeploy-also-viewed]")
    assert "used by pdp" in page.inner_text("[data-testid=why-also-viewed]")
    assert page.is_disabled("[data-testid=undeploy-viewed-next]")
    page.click("[data-testid=deploy-viewed-next]")
    page.wait_for_selector("#job-viewed-next [data-testid=job][data-status=completed]", timeout=30_000)
    assert "100%" in page.inner_text("#job-viewed-next")
    assert "deployed v1" in page.inner_text("[data-testid=serving-viewed-next]")  # the row's new state
    assert page.is_disabled("[data-testid=deploy-viewed-next]")
    assert page.is_enabled("[data-testid=undeploy-viewed-next]")
    shot(page, "10-models-jobs")


def test_bad_container_input_is_shown_and_nothing_saved(console_env: ConsoleEnv, page: Any) -> None:
    sign_in(page, console_env, console_env.full_token)
    page.goto(console_env.console + "/console/fashion/containers/pdp")
    version = page.inner_text("[data-testid=version]")
    page.fill("input[aria-label='item count']", "0")
    page.click("[data-testid=save-container]")
    page.wait_for_selector(".err")
    assert "itemCount" in page.inner_text(".err")
    assert page.inner_text("[data-testid=version]") == version
    # a recommendation rule the edit service refuses: its message beside the rules, nothing saved
    page.fill("input[aria-label='item count']", "10")
    page.click("[data-testid=add-rec-filter]")
    set_leaf(page.locator("#rules-editor .action").last.locator(".leaf").first, "color", "in", " ")
    page.click("[data-testid=save-container]")
    page.wait_for_selector("#rules-editor .action.has-err .err")
    assert page.locator("#rules-editor .action.has-err").count() == 1
    message = page.inner_text("#rules-editor .action.has-err .err")
    assert message.startswith("condition.in.value"), message
    assert page.inner_text("[data-testid=version]") == version
    shot(page, "12-container-error")


def set_leaf(leaf: Any, field: str, op: str, value: str) -> None:
    """Fill one condition of the builder (its inputs commit on ``change``)."""
    leaf.locator("input[aria-label='condition field']").fill(field)
    leaf.locator("input[aria-label='condition field']").dispatch_event("change")
    leaf.locator("select[aria-label=operator]").select_option(op)
    leaf.locator("input[aria-label='condition value']").fill(value)
    leaf.locator("input[aria-label='condition value']").dispatch_event("change")


def test_condition_builder_nests_groups_and_not(console_env: ConsoleEnv, page: Any) -> None:
    sign_in(page, console_env, console_env.full_token)
    page.goto(console_env.console + "/console/fashion/containers/pdp")
    existing = len(json.loads(page.input_value("input[name=rules_json]")))
    page.click("[data-testid=add-rec-boost]")
    rule = page.locator("#rules-editor .action").nth(existing)
    set_leaf(rule.locator(".leaf").first, "price", "lt", "1000")
    rule.locator("button[title='wrap in a group']").click()
    rule.locator("button:has-text('+ condition')").click()
    set_leaf(rule.locator(".leaf").nth(1), "color", "in", "Red | Pink")
    rule.locator("select[aria-label=group]").select_option("or")
    rule.locator(".group-head button:has-text('not')").click()
    rules = json.loads(page.input_value("input[name=rules_json]"))
    assert rules[existing]["condition"] == {
        "op": "not",
        "condition": {
            "op": "or",
            "conditions": [
                {"op": "lt", "field": "price", "value": 1000},
                {"op": "in", "field": "color", "value": ["Red", "Pink"]},
            ],
        },
    }
    page.fill("input[aria-label='seed product']", SEED)
    page.click("[data-testid=rec-preview]")
    page.wait_for_selector("[data-testid=rec-with] .pcard")
    shot(page, "11-condition-builder")


def test_add_a_slot_and_read_only_containers(console_env: ConsoleEnv, page: Any) -> None:
    sign_in(page, console_env, console_env.full_token)
    page.goto(console_env.console + "/console/fashion/containers/pdp")
    page.click("[data-testid=add-slot]")
    page.locator("input[aria-label='slot id']").nth(1).fill("more")
    page.locator("input[aria-label='placement']").nth(1).fill("1")
    page.click("[data-testid=save-container]")
    page.wait_for_selector("text=Saved as version")
    headers = {"authorization": f"Bearer {console_env.full_token}"}
    stored = httpx.get(f"{console_env.edit}/containers/pdp", params={"tenant": "fashion"}, headers=headers)
    assert [s["slotConfigId"] for s in stored.json()["slotConfigurations"]] == ["main", "more"]

    page.click("button:has-text('Sign out')")
    sign_in(page, console_env, console_env.read_only_token)
    page.goto(console_env.console + "/console/fashion/containers/pdp")
    assert page.locator("[data-testid=save-container]").count() == 0
    assert page.locator("[data-testid^=add-rec-]").count() == 0
    assert page.is_disabled("input[aria-label='slot id'] >> nth=0")
    page.goto(console_env.console + "/console/fashion/models")
    assert page.locator("[data-testid^=deploy-]").count() == 0


def test_a_stale_container_save_is_a_409_and_changes_nothing(console_env: ConsoleEnv, page: Any) -> None:
    env = console_env
    headers = {"authorization": f"Bearer {env.full_token}"}
    sign_in(page, env, env.full_token)
    page.goto(env.console + "/console/fashion/containers/pdp")
    current = httpx.get(f"{env.edit}/containers/pdp", params={"tenant": "fashion"}, headers=headers).json()
    moved = httpx.put(
        f"{env.edit}/containers/pdp",
        params={"tenant": "fashion"},
        json={**current, "name": "Theirs"},
        headers=headers,
    )
    assert moved.status_code == 200
    page.fill("#cname", "Mine")
    page.click("[data-testid=save-container]")
    page.wait_for_selector("[data-testid=conflict]")
    assert "409" in page.inner_text("[data-testid=conflict]")
    stored = httpx.get(f"{env.edit}/containers/pdp", params={"tenant": "fashion"}, headers=headers).json()
    assert stored["name"] == "Theirs" and stored["version"] == moved.json()["version"]
    page.click("[data-testid=conflict] button")
    page.wait_for_selector("text=Saved as version")
    assert (
        httpx.get(f"{env.edit}/containers/pdp", params={"tenant": "fashion"}, headers=headers).json()["name"]
        == "Mine"
    )
