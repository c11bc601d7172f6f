"""The console with auth on, over HTTP: the token decides who may sign in, which tenants and what edits."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.support.auth import AuthKit

from aisle.core.auth.scopes import RECS_READ, SEARCH_READ
from aisle.core.storage import open_blob_store
from aisle.services.rules.app import create_app
from aisle.services.rules.console.session import COOKIE


@pytest.fixture(scope="module")
def kit(demo_env: Any) -> AuthKit:
    return AuthKit(open_blob_store(demo_env.storage_url))


@pytest.fixture
def client(demo_env: Any, kit: AuthKit) -> Iterator[TestClient]:
    settings = kit.settings(
        storage_url=demo_env.storage_url, data_dir=demo_env.data_dir, edit_url="http://127.0.0.1:9"
    )
    with TestClient(create_app(settings)) as c:
        yield c


def login(client: TestClient, token: str) -> Any:
    nonce = re.search(r'name="nonce" value="([0-9a-f]+)"', client.get("/console/login").text)
    assert nonce
    return client.post(
        "/console/login", data={"nonce": nonce.group(1), "token": token}, follow_redirects=False
    )


def test_an_expired_or_forged_token_cannot_sign_in(client: TestClient, kit: AuthKit) -> None:
    expired = kit.token(["fashion"], ttl=60, now=int(time.time()) - 3600)
    resp = login(client, expired)
    assert resp.status_code == 401 and "expired" in resp.text.lower()
    assert COOKIE not in resp.cookies
    resp = login(client, expired[:-4] + "AAAA")
    assert resp.status_code == 401
    # a cookie that is not a valid token sends the page back to sign-in, with the reason
    client.cookies.set(COOKIE, "not-a-token")
    page = client.get("/console/fashion/rules", follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"].startswith("/console/login?reason=")


def test_the_tokens_tenants_bound_the_console(client: TestClient, kit: AuthKit) -> None:
    assert login(client, kit.token(["fashion"])).status_code == 303
    page = client.get("/console/fashion/rules")
    assert page.status_code == 200 and page.headers["x-frame-options"] == "DENY"
    assert '<option value="homedepot"' not in page.text
    assert client.get("/console/homedepot/rules").status_code == 403
    # the edit service is down: the containers page says so instead of failing
    down = client.get("/console/fashion/containers")
    assert down.status_code == 200 and "unreachable" in down.text


def test_a_read_only_token_is_refused_by_the_api_even_through_the_console(
    client: TestClient, kit: AuthKit
) -> None:
    login(client, kit.token(["fashion"], scopes=[SEARCH_READ, RECS_READ]))
    page = client.get("/console/fashion/rules")
    assert "read-only" in page.text and "New rule" not in page.text
    csrf = re.search(r'"X-CSRF-Token": "([0-9a-f]+)"', page.text)
    assert csrf
    form = {
        "csrf": csrf.group(1),
        "new_id": "nope",
        "name": "x",
        "q_match": "exact",
        "q_value": "x",
        "act": ["k"],
        "ak_type": "rewrite",
        "ak_query": "y",
    }
    resp = client.post("/console/fashion/rules/save", data=form)
    assert "rules:write" in resp.text
    assert client.get("/console/fashion/rules/nope").status_code == 200  # the page exists...
    assert "Rule not available" in client.get("/console/fashion/rules/nope").text  # ...the rule does not
