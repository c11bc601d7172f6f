"""Where signing in lands (no browser): a token for several tenants gets a chooser listing each with its
products, rules and running experiments, and goes to the one chosen; a token for one tenant goes
straight to its rules (a sign-in used to land on the first tenant's rules, whichever it was)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.services.rules.conftest import copy_tenant
from tests.support.auth import AuthKit

from aisle.core.auth.scopes import RULES_WRITE
from aisle.core.storage import open_blob_store
from aisle.services.rules.app import create_app

RULE = {
    "id": "nike-first",
    "name": "Nike first",
    "enabled": False,
    "conditions": {"query": {"match": "contains", "value": "shoes"}},
    "actions": [{"type": "hide", "productIds": ["15970"]}],
}


@pytest.fixture(scope="module")
def bucket(demo_env: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tenants") / "bucket"
    copy_tenant(demo_env, path, "fashion")
    copy_tenant(demo_env, path, "homedepot")
    return path


@pytest.fixture(scope="module")
def kit(bucket: Path) -> AuthKit:
    return AuthKit(open_blob_store(f"file://{bucket}"))


@pytest.fixture(scope="module")
def client(demo_env: Any, kit: AuthKit, bucket: Path) -> Iterator[TestClient]:
    settings = kit.settings(storage_url=f"file://{bucket}", data_dir=demo_env.data_dir)
    with TestClient(create_app(settings)) as c:
        yield c


def sign_in(client: TestClient, token: str) -> Any:
    client.cookies.clear()
    nonce = re.search(r'name="nonce" value="([0-9a-f]+)"', client.get("/console/login").text)
    assert nonce
    signed = client.post(
        "/console/login", data={"nonce": nonce.group(1), "token": token}, follow_redirects=False
    )
    assert signed.status_code == 303 and signed.headers["location"] == "/console/"
    return client.get("/console/", follow_redirects=False)


def cells(html: str) -> list[str]:
    return [" ".join(re.sub(r"<[^>]+>", " ", c).split()) for c in re.findall(r"<td>(.*?)</td>", html, re.S)]


def test_several_tenants_get_a_chooser_with_a_line_each(client: TestClient, kit: AuthKit) -> None:
    token = kit.token(["fashion", "homedepot"])
    auth = {"Authorization": f"Bearer {token}"}
    assert client.post("/rules", params={"tenant": "fashion"}, json=RULE, headers=auth).status_code == 201
    body = {
        "name": "Hybrid off",
        "variants": [{"id": "control"}, {"id": "b", "changes": {"hybrid": {"enabled": False}}}],
    }
    made = client.post("/experiments", params={"tenant": "homedepot"}, json=body, headers=auth).json()
    assert client.post(
        f"/experiments/{made['id']}/start", params={"tenant": "homedepot"}, headers=auth
    ).is_success
    home = sign_in(client, token)
    assert home.status_code == 200, home.text
    assert "Choose a shop" in home.text
    assert re.findall(r'<tr data-tenant="([^"]+)" hx-get="/console/\1/summary"', home.text) == [
        "fashion",
        "homedepot",
    ]
    assert 'href="/console/homedepot/rules"' in home.text  # choosing a tenant goes to it
    fashion = cells(client.get("/console/fashion/summary").text)
    expected = client.post(
        "/rules/preview", params={"tenant": "fashion"}, json={"search": {"query": ""}}, headers=auth
    ).json()["withoutRule"]["total"]
    assert expected > 1000
    assert fashion == ["fashion", f"{expected:,}", "1 (0 enabled)", "none"]
    homedepot = cells(client.get("/console/homedepot/summary").text)
    assert homedepot[2:] == ["none yet", "Hybrid off"]
    assert client.get("/console/homedepot/rules").status_code == 200
    assert client.get("/console/grocery/summary").status_code == 403  # not the token's


def test_one_tenant_goes_straight_to_it_and_figures_need_their_scope(
    client: TestClient, kit: AuthKit
) -> None:
    home = sign_in(client, kit.token(["homedepot"]))
    assert home.status_code == 303 and home.headers["location"] == "/console/homedepot/rules"
    sign_in(client, kit.token(["fashion", "homedepot"], scopes=[RULES_WRITE], client_id="rules-only"))
    line = client.get("/console/fashion/summary").text
    assert "counting products needs the search:read scope" in line
