"""The storefront's API on the search service: the page's read-only token for one tenant, the event
relay to the edit service, the page and its bundle, ``AISLE_STOREFRONT=false``, and ``analytics: false``
searches (a page's helper queries: no attributionToken)."""

from __future__ import annotations

import base64
import json
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from shutil import ignore_patterns
from typing import Any

import httpx
import polars as pl
import pytest
from fastapi.testclient import TestClient
from tests.support.auth import AuthKit, free_port, serve
from tests.support.recs import write_shop

from aisle.core.auth.scopes import RECS_READ, RECS_WRITE
from aisle.core.storage import open_blob_store
from aisle.services.search import shop

PRODUCTS = pl.DataFrame(
    {
        "id": [f"p{i}" for i in range(6)],
        "title": [f"Red shoe {i}" for i in range(6)],
        "price": [10.0 * i for i in range(6)],
    }
)
EVENT_TYPES = ["view", "add_to_cart", "purchase"]


@dataclass
class Env:
    search: TestClient
    edit: str
    kit: AuthKit


@pytest.fixture
def env(demo_env: Any, tmp_path: Path) -> Iterator[Env]:
    """The fashion demo tenant copied as ``shop`` (searchable), a small tenant ``other``, an edit service."""
    from aisle.services.edit.app import create_app as edit_app
    from aisle.services.search.app import create_app as search_app

    url = f"file://{tmp_path / 'bucket'}"
    shutil.copytree(
        demo_env.store.local_path("fashion"), tmp_path / "bucket" / "shop", ignore=ignore_patterns("rules")
    )
    store = open_blob_store(url)
    write_shop(store, "other", PRODUCTS, EVENT_TYPES)
    kit = AuthKit(store)
    base = {"storage_url": url, "data_dir": tmp_path / "data"}
    with serve(edit_app(kit.settings(**base))) as edit:
        app = search_app(kit.settings(**base, edit_url=edit, storefront_tenants="shop"), preload=False)
        with TestClient(app) as client:
            yield Env(client, edit, kit)


def _session(client: TestClient, tenant: str = "shop") -> str:
    r = client.get("/shop/session", params={"tenant": tenant})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["scopes"] == ["search:read", "recs:read"] and body["expiresIn"] == 900
    token: str = body["token"]
    return token


def test_the_page_token_reads_one_tenant_and_writes_nothing(env: Env) -> None:
    token = _session(env.search)
    auth = {"Authorization": f"Bearer {token}"}
    ok = env.search.post("/search", json={"query": "shoe", "tenant": "shop"}, headers=auth)
    assert ok.status_code == 200 and ok.json()["total"] > 0
    other = env.search.post("/search", json={"query": "shoe", "tenant": "other"}, headers=auth)
    assert (other.status_code, other.json()["error"]["code"]) == (403, "tenant_forbidden")
    event = {"visitorId": "v1", "eventType": "purchase", "productId": "p1", "timestamp": time.time()}
    direct = httpx.post(f"{env.edit}/events", params={"tenant": "shop"}, json=event, headers=auth)
    assert (direct.status_code, direct.json()["error"]["code"]) == (403, "insufficient_scope")
    # a tenant that has not opened a storefront (AISLE_STOREFRONT_TENANTS) gets no page token, and
    # learns nothing of whether a tenant exists
    for closed_tenant in ("other", "nope"):
        closed = env.search.get("/shop/session", params={"tenant": closed_tenant})
        assert (closed.status_code, closed.json()["error"]["code"]) == (403, "tenant_forbidden")


def test_events_are_relayed_with_attribution_and_only_shopper_types(env: Env) -> None:
    token = _session(env.search)
    auth = {"Authorization": f"Bearer {token}"}
    answer = env.search.post("/search", json={"query": "shoe", "tenant": "shop"}, headers=auth).json()
    event = {
        "visitorId": "v-page",
        "eventType": "click",
        "productId": answer["products"][1]["id"],
        "timestamp": time.time(),
        "eventId": "e-1",
        "attributionToken": answer["attributionToken"],
        "position": 2,
    }
    buy = {**event, "eventType": "purchase", "eventId": "e-2", "price": 10.0, "quantity": 1}
    r = env.search.post(
        "/shop/events", params={"tenant": "shop"}, json={"events": [event, buy]}, headers=auth
    )
    assert (r.status_code, r.json()) == (202, {"accepted": 2})
    reader = {"Authorization": f"Bearer {env.kit.token(['shop'], [RECS_READ])}"}
    stored = httpx.get(f"{env.edit}/events", params={"tenant": "shop", "visitorId": "v-page"}, headers=reader)
    assert sorted(e["eventType"] for e in stored.json()["events"]) == ["click", "purchase"]
    # not a shopper event type, another tenant, no token, an unknown field: refused before the relay
    view = env.search.post(
        "/shop/events",
        params={"tenant": "shop"},
        json={"events": [{**event, "eventType": "view"}]},
        headers=auth,
    )
    assert view.status_code == 422
    other = env.search.post(
        "/shop/events", params={"tenant": "other"}, json={"events": [event]}, headers=auth
    )
    assert other.json()["error"]["code"] == "tenant_forbidden"
    anonymous = env.search.post("/shop/events", params={"tenant": "shop"}, json={"events": [event]})
    assert anonymous.status_code == 401
    extra = env.search.post(
        "/shop/events", params={"tenant": "shop"}, json={"events": [{**event, "userId": "u"}]}, headers=auth
    )
    assert extra.status_code == 422


def test_the_relay_token_is_write_only_for_its_tenant(env: Env) -> None:
    tokens = env.search.app.state.shop.tokens
    relay = tokens.relay_token("shop")
    assert tokens.relay_token("shop") == relay, "reused while fresh"
    claims = json.loads(base64.urlsafe_b64decode(relay.split(".")[1] + "=="))
    assert (claims["scope"], claims["tenants"], claims["exp"] - claims["iat"]) == (RECS_WRITE, ["shop"], 60)


def test_an_unreachable_edit_service_is_a_503(tmp_path: Path) -> None:
    from aisle.services.search.app import create_app as search_app

    url = f"file://{tmp_path / 'bucket'}"
    store = open_blob_store(url)
    write_shop(store, "shop", PRODUCTS, EVENT_TYPES)
    kit = AuthKit(store)
    settings = kit.settings(
        storage_url=url,
        data_dir=tmp_path / "data",
        edit_url=f"http://127.0.0.1:{free_port()}",
        storefront_tenants="shop",
    )
    with TestClient(search_app(settings, preload=False)) as client:
        token = _session(client)
        event = {"visitorId": "v", "eventType": "click", "productId": "p1", "timestamp": time.time()}
        r = client.post(
            "/shop/events",
            params={"tenant": "shop"},
            json={"events": [event]},
            headers={"Authorization": f"Bearer {token}"},
        )
    assert (r.status_code, r.json()["error"]["code"]) == (503, "shop_events_unavailable")
    assert r.headers["Retry-After"]


def test_the_page_its_assets_and_photos(env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = tmp_path / "assets"
    built.mkdir()
    (built / "index.html").write_text((shop.ASSETS / "index.html").read_text())
    monkeypatch.setattr(shop, "ASSETS", built)
    page = env.search.get("/shop/")
    assert page.status_code == 503 and "make install" in page.text  # no bundle yet
    (built / "app.js").write_text("export {};")
    page = env.search.get("/shop/")
    assert page.status_code == 200 and '<script type="module" src="/shop/assets/app.js">' in page.text
    assert env.search.get("/shop/assets/app.js").headers["content-type"].startswith("text/javascript")
    assert env.search.get("/shop/assets/index.html").status_code == 404  # only the listed assets
    assert env.search.get("/shop/assets/..%2Fshop.py").status_code == 404
    assert env.search.get("/shop", follow_redirects=False).headers["location"] == "/shop/"
    # the page's query string is its script's state (and a link's campaign tags): never refused, kept
    # by the redirect
    shared = "tenant=shop&q=red+shirt&brand=Nike&brand=Puma&page=2&utm_source=mail"
    assert env.search.get(f"/shop/?{shared}").status_code == 200
    moved = env.search.get(f"/shop?{shared}", follow_redirects=False)
    assert (moved.status_code, moved.headers["location"]) == (308, f"/shop/?{shared}")
    assert env.search.get("/shop/session?tenant=shop&q=x").json()["error"]["code"] == "unknown_parameter"
    assert env.search.get("/shop/photos/shop/p1").status_code == 404  # no AISLE_PHOTOS_DIR


def test_the_storefront_can_be_turned_off(tmp_path: Path) -> None:
    from aisle.services.search.app import create_app as search_app

    url = f"file://{tmp_path / 'bucket'}"
    write_shop(open_blob_store(url), "shop", PRODUCTS, EVENT_TYPES)
    kit = AuthKit(open_blob_store(url))
    settings = kit.settings(storage_url=url, data_dir=tmp_path / "data", storefront=False)
    with TestClient(search_app(settings, preload=False)) as client:
        for path in ("/shop/", "/shop", "/shop/?q=shoe", "/shop/session?tenant=shop"):
            assert client.get(path).status_code == 404


def test_a_helper_query_gets_no_attribution_token(env: Env) -> None:
    auth = {"Authorization": f"Bearer {_session(env.search)}"}
    body = {"query": "shoe", "tenant": "shop", "size": 1}
    shown = env.search.post("/search", json=body, headers=auth).json()
    helper = env.search.post("/search", json={**body, "analytics": False}, headers=auth).json()
    assert "attributionToken" in shown and "attributionToken" not in helper
    assert helper["products"] == shown["products"]
