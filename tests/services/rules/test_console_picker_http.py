"""The product picker's choices over HTTP (no browser): what a merchandiser sees under a product-id field
while typing (a rule's pins and hidden products, a container preview's seed asked for a raw id): the
product with that id first, then the live search's results, each with its title and id, and the
scopes each part needs."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.services.rules.test_console_auth_http import login
from tests.services.rules.test_console_http import sign_in
from tests.support.auth import AuthKit

from aisle.core.auth.scopes import CATALOG_READ, RULES_WRITE, SEARCH_READ
from aisle.core.storage import open_blob_store
from aisle.services.rules.app import create_app

PICKS = "/console/fashion/product-picks"


def options(html: str) -> list[tuple[str, str]]:
    """(id, title) of each choice."""
    return re.findall(r'<li role="option" id="pick-\d+" data-id="([^"]+)" data-title="([^"]*)"', html)


def test_words_find_products_with_their_titles_and_an_id_comes_first(client: TestClient) -> None:
    client.cookies.clear()
    sign_in(client)
    found = options(client.get(PICKS, params={"q": "running shoes"}).text)
    assert 3 <= len(found) <= 9
    assert all(pid and title and title != pid for pid, title in found)
    assert any("shoe" in title.lower() for _, title in found)
    first_id = found[0][0]
    by_id = client.get(PICKS, params={"q": first_id}).text
    assert options(by_id)[0][0] == first_id and '<span class="pill on">id</span>' in by_id
    assert [pid for pid, _ in options(client.get(PICKS, params={"q": first_id, "exact": "1"}).text)] == [
        first_id
    ]
    assert options(client.get(PICKS, params={"q": "zzqqxx"}).text) == []
    assert "No product matches" in client.get(PICKS, params={"q": "zzqqxx"}).text
    assert client.get("/console/other/product-picks", params={"q": "shoes"}).status_code == 403


@pytest.fixture
def authed(demo_env: Any) -> Iterator[tuple[TestClient, AuthKit]]:
    kit = AuthKit(open_blob_store(demo_env.storage_url))
    settings = kit.settings(storage_url=demo_env.storage_url, data_dir=demo_env.data_dir)
    with TestClient(create_app(settings)) as c:
        yield c, kit


def test_each_part_needs_its_scope(authed: tuple[TestClient, AuthKit]) -> None:
    client, kit = authed
    login(client, kit.token(["fashion"], scopes=[RULES_WRITE, CATALOG_READ], client_id="no-search"))
    words = client.get(PICKS, params={"q": "15970"}).text
    assert [pid for pid, _ in options(words)] == ["15970"]  # the id, from the catalog
    assert "search:read" in words  # and why words find nothing
    login(client, kit.token(["fashion"], scopes=[RULES_WRITE, SEARCH_READ], client_id="no-catalog"))
    assert options(client.get(PICKS, params={"q": "15970", "exact": "1"}).text) == []
    assert len(options(client.get(PICKS, params={"q": "running shoes"}).text)) >= 3
