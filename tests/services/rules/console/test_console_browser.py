"""The console in real Chromium: sign in, author a rule in the form, preview it, pin by dragging, a 409
and its recovery, a read-only token. Screenshots of the main pages go to ``conftest.SHOTS``."""

from __future__ import annotations

from typing import Any

import httpx
from tests.services.rules.console.conftest import ConsoleEnv, shot, sign_in


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
    assert all("Puma" in b for b in brands), brands
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
