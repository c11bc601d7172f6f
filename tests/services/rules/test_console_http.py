"""The console's routes over HTTP (no browser): sign-in, CSRF, the rule editor's round trips, history."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from aisle.services.rules.console.session import COOKIE


def sign_in(client: TestClient, token: str = "") -> str:
    """Sign in through the form; returns the CSRF token of the session."""
    page = client.get("/console/login")
    nonce = re.search(r'name="nonce" value="([0-9a-f]+)"', page.text)
    assert nonce, page.text
    resp = client.post(
        "/console/login", data={"nonce": nonce.group(1), "token": token}, follow_redirects=False
    )
    assert resp.status_code == 303, resp.text
    home = client.get("/console/fashion/rules")
    assert home.status_code == 200
    m = re.search(r'"X-CSRF-Token": "([0-9a-f]+)"', home.text)
    assert m
    return m.group(1)


def rule_form(csrf: str, **overrides: Any) -> dict[str, Any]:
    form: dict[str, Any] = {
        "csrf": csrf,
        "name": "Nike first",
        "priority": "5",
        "enabled": "on",
        "q_match": "contains",
        "q_value": "shoes",
        "act": ["k1"],
        "ak1_type": "boost",
        "ak1_field": ["brand"],
        "ak1_value": ["Nike"],
        "ak1_weight": "20",
    }
    form.update(overrides)
    return form


def test_root_redirects_to_sign_in(client: TestClient) -> None:
    client.cookies.clear()
    resp = client.get("/", follow_redirects=True)
    assert resp.status_code == 200
    assert "Sign in" in resp.text


def test_static_assets_are_local(client: TestClient) -> None:
    js = client.get("/console/static/htmx.min.js")
    assert js.status_code == 200 and "htmx" in js.text
    page = client.get("/console/login")
    assert "https://" not in re.sub(r"<p class=\"sub\">.*?</p>", "", page.text, flags=re.S)


def test_create_edit_and_history(client: TestClient) -> None:
    client.cookies.clear()
    csrf = sign_in(client)
    resp = client.post(
        "/console/fashion/rules/save", data=rule_form(csrf, new_id="nike"), follow_redirects=False
    )
    assert resp.status_code == 303, resp.text
    assert resp.headers["location"] == "/console/fashion/rules/nike?saved=1"
    page = client.get("/console/fashion/rules/nike")
    assert 'value="Nike first"' in page.text and "Saved" not in page.text
    listing = client.get("/console/fashion/rules?q=nike")
    assert "rule-nike" in listing.text
    assert "rule-nike" not in client.get("/console/fashion/rules?q=zzz").text
    # edit: version 1 -> 2
    resp = client.post(
        "/console/fashion/rules/save",
        data=rule_form(csrf, rule_id="nike", version="1", name="Nike first!"),
        follow_redirects=False,
    )
    assert resp.headers["location"] == "/console/fashion/rules/nike?saved=2"
    hist = client.get("/console/fashion/rules/nike/history")
    assert "v2" in hist.text and "Nike first!" in hist.text
    assert "-  &#34;name&#34;: &#34;Nike first&#34;" in hist.text or "Nike first&#34;" in hist.text
    # revert to version 1 writes version 3
    resp = client.post(
        "/console/fashion/rules/nike/revert",
        data={"csrf": csrf, "to": "1", "version": "2"},
        follow_redirects=False,
    )
    assert resp.headers["location"] == "/console/fashion/rules/nike?saved=3"
    assert client.get("/rules/nike?tenant=fashion").json()["name"] == "Nike first"


def test_stale_version_shows_conflict_and_keeps_the_draft(client: TestClient) -> None:
    client.cookies.clear()
    csrf = sign_in(client)
    client.post("/console/fashion/rules/save", data=rule_form(csrf, new_id="c"), follow_redirects=False)
    client.post(
        "/console/fashion/rules/save", data=rule_form(csrf, rule_id="c", version="1"), follow_redirects=False
    )
    resp = client.post(
        "/console/fashion/rules/save", data=rule_form(csrf, rule_id="c", version="1", name="mine")
    )
    assert resp.status_code == 200
    assert 'data-testid="conflict"' in resp.text and "version 2" in resp.text
    assert 'value="mine"' in resp.text
    assert client.get("/rules/c?tenant=fashion").json()["version"] == 2


def test_bad_input_is_shown_next_to_its_field_and_nothing_is_saved(client: TestClient) -> None:
    client.cookies.clear()
    csrf = sign_in(client)
    form = rule_form(csrf, new_id="bad", q_match="regex", q_value="(a", ak1_weight="-3")
    resp = client.post("/console/fashion/rules/save", data=form)
    assert resp.status_code == 200
    assert 'data-error-for="q"' in resp.text and "regex" in resp.text
    assert 'data-error-for="ak1"' in resp.text
    assert client.get("/rules/bad?tenant=fashion").status_code == 404


def test_posts_without_csrf_are_refused(client: TestClient) -> None:
    client.cookies.clear()
    sign_in(client)
    resp = client.post("/console/fashion/rules/save", data=rule_form("0" * 32, new_id="x"))
    assert resp.status_code == 403
    assert client.get("/rules/x?tenant=fashion").status_code == 404


def test_session_cookie_is_http_only_and_strict(client: TestClient) -> None:
    client.cookies.clear()
    page = client.get("/console/login")
    nonce = re.search(r'name="nonce" value="([0-9a-f]+)"', page.text).group(1)  # type: ignore[union-attr]
    resp = client.post("/console/login", data={"nonce": nonce}, follow_redirects=False)
    cookie = resp.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie and "SameSite=strict" in cookie


@pytest.mark.parametrize("kind", ["pin", "hide", "boost", "bury", "filter", "redirect", "rewrite"])
def test_every_action_has_a_form_block(client: TestClient, kind: str) -> None:
    client.cookies.clear()
    sign_in(client)
    resp = client.get(f"/console/fashion/fragments/action?kind={kind}")
    assert resp.status_code == 200 and f'data-action-type="{kind}"' in resp.text


def test_schedule_toggle_and_delete(client: TestClient) -> None:
    client.cookies.clear()
    csrf = sign_in(client)
    form = rule_form(csrf, new_id="sched", start="2026-11-27T00:00", end="2026-11-30T23:59")
    client.post("/console/fashion/rules/save", data=form, follow_redirects=False)
    stored = client.get("/rules/sched?tenant=fashion").json()
    assert (stored["conditions"]["start"], stored["conditions"]["end"]) == (
        "2026-11-27T00:00:00Z",
        "2026-11-30T23:59:00Z",
    )
    assert 'value="2026-11-27T00:00"' in client.get("/console/fashion/rules/sched").text
    row = client.post("/console/fashion/rules/sched/toggle", data={"csrf": csrf, "version": "1"})
    assert row.status_code == 200 and "disabled" in row.text and 'value="2"' in row.text
    assert client.get("/rules/sched?tenant=fashion").json()["enabled"] is False
    stale = client.post("/console/fashion/rules/sched/toggle", data={"csrf": csrf, "version": "1"})
    assert "Changed by someone else" in stale.text
    gone = client.post(
        "/console/fashion/rules/sched/delete", data={"csrf": csrf, "version": "2"}, follow_redirects=False
    )
    assert gone.status_code == 303
    assert client.get("/rules/sched?tenant=fashion").status_code == 404


def test_rule_text_is_escaped(client: TestClient) -> None:
    client.cookies.clear()
    csrf = sign_in(client)
    evil = "<img src=x onerror=alert(1)>"
    client.post(
        "/console/fashion/rules/save", data=rule_form(csrf, new_id="evil", name=evil), follow_redirects=False
    )
    for url in (
        "/console/fashion/rules",
        "/console/fashion/rules/evil",
        "/console/fashion/rules/evil/history",
    ):
        page = client.get(url).text
        assert evil not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
