"""The console's product page over HTTP (no browser, a tiny tenant on a local bucket): find a product by
id, change its price and availability as a merge patch, its history from the change log, a stale change
and refused values explained, and the catalog scopes and CSRF enforced."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from tests.support.auth import AuthKit
from tests.support.product_shop import TENANT as PLAIN
from tests.support.product_shop import attributes, shop

from aisle.catalog.datasets.common import tenant_files
from aisle.catalog.importer import import_catalog
from aisle.catalog.writer import CatalogWriter
from aisle.core.auth.scopes import CATALOG_READ, CATALOG_WRITE, SEARCH_READ
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import Attribute, AttributeConfiguration, GlobalConfiguration
from aisle.services.rules.app import create_app
from aisle.services.rules.console.session import COOKIE, csrf_token

STOCKED = "stocked"
CATALOG = """sku,name,maker,cost,stock,active,availability
1,Red Running Shoe,Nike,1249.5,3,true,IN_STOCK
2,Blue Shirt,Puma,20,0,false,OUT_OF_STOCK
"""


@pytest.fixture(autouse=True)
def no_rules() -> None:
    """The package's fixture of that name clears the fashion demo copy's rules; this module's tenants are
    its own, so it needs no demo tenant (and stays in the fast tier)."""


@pytest.fixture
def env(tmp_path: Path) -> Iterator[tuple[TestClient, AuthKit, Tenants]]:
    store = open_blob_store(f"file://{tmp_path / 'bucket'}")
    tenants = shop(store, tmp_path)  # "shop": no availability attribute
    stocked = AttributeConfiguration(
        id_source="sku",
        attributes=[*attributes().attributes, Attribute(name="availability", filterable=True)],
    )
    tenants.write_config(STOCKED, tenant_files(stocked, GlobalConfiguration(currency="EUR")))
    (tmp_path / "stocked.csv").write_text(CATALOG)
    import_catalog(tenants, STOCKED, tmp_path / "stocked.csv")
    kit = AuthKit(store)
    settings = kit.settings(storage_url=f"file://{tmp_path / 'bucket'}", data_dir=str(tmp_path / "data"))
    with TestClient(create_app(settings)) as client:
        yield client, kit, tenants


def sign_in(client: TestClient, token: str) -> str:
    """Sign in with ``token``; returns the session's CSRF token."""
    nonce = re.search(r'name="nonce" value="([0-9a-f]+)"', client.get("/console/login").text)
    assert nonce
    signed = client.post(
        "/console/login", data={"nonce": nonce.group(1), "token": token}, follow_redirects=False
    )
    assert signed.status_code == 303, signed.text
    return csrf_token(client.cookies[COOKIE])


def field(page: str, name: str) -> str:
    found = re.search(rf'<dd data-field="{name}">\s*([^<]*?)\s*<', page)
    assert found, name
    return found.group(1)


def test_change_price_and_availability_and_see_the_history(
    env: tuple[TestClient, AuthKit, Tenants],
) -> None:
    client, kit, tenants = env
    csrf = sign_in(client, kit.token([STOCKED, PLAIN], scopes=[CATALOG_READ, CATALOG_WRITE]))
    found = client.get(f"/console/{STOCKED}/products", params={"q": "1"})
    assert found.status_code == 200 and 'href="/console/stocked/products/1"' in found.text
    assert "search:read" in found.text  # words need search:read: said, not failed
    page = client.get(f"/console/{STOCKED}/products/1")
    assert page.status_code == 200 and ">Products</a>" in page.text
    assert field(page.text, "price") == "1,249.50" and "Price (EUR)" in page.text
    assert 'id="availability"' in page.text and "The change log is empty" in page.text
    form = {"csrf": csrf, "price": "1300", "was_price": "1249.50",
            "availability": "PREORDER", "was_availability": "IN_STOCK"}  # fmt: skip
    saved = client.post(f"/console/{STOCKED}/products/1", data=form, follow_redirects=False)
    assert saved.status_code == 303 and saved.headers["location"].endswith("/products/1?saved=1")
    page = client.get(saved.headers["location"])
    assert "Saved as catalog sequence <strong>1</strong>" in page.text
    assert field(page.text, "price") == "1,300.00" and field(page.text, "availability") == "PREORDER"
    rows = re.findall(r'<tr data-seq="(\d+)">', page.text)
    assert rows == ["1"] and "price: 1,300.00" in page.text and "availability: PREORDER" in page.text
    # only what changed is written: the availability as shown, a new price
    form = {**form, "price": "1350", "was_price": "1300.00", "was_availability": "PREORDER"}
    client.post(f"/console/{STOCKED}/products/1", data=form)
    history = client.get(f"/console/{STOCKED}/products/1").text
    assert re.findall(r'<tr data-seq="(\d+)">', history) == ["2", "1"]
    newest = history.split('<tr data-seq="2">')[1].split("</tr>")[0]
    assert "price: 1,350.00" in newest and "availability" not in newest
    assert CatalogWriter(tenants).product(STOCKED, "1").fields["availability"] == "PREORDER"


def test_a_tenant_without_availability_edits_the_price_only_and_says_why(
    env: tuple[TestClient, AuthKit, Tenants],
) -> None:
    client, kit, _ = env
    sign_in(client, kit.token([STOCKED, PLAIN], scopes=[CATALOG_READ, CATALOG_WRITE]))
    page = client.get(f"/console/{PLAIN}/products/2").text
    assert 'id="price"' in page and 'id="availability"' not in page
    assert "no availability attribute" in page


def test_stale_and_refused_changes_are_explained(env: tuple[TestClient, AuthKit, Tenants]) -> None:
    client, kit, tenants = env
    csrf = sign_in(client, kit.token([STOCKED], scopes=[CATALOG_READ, CATALOG_WRITE]))
    url = f"/console/{STOCKED}/products/2"
    bad = client.post(url, data={"csrf": csrf, "price": "-3", "was_price": "20.00"})
    assert bad.status_code == 422 and 'data-error-for="price"' in bad.text and "is negative" in bad.text
    assert 'value="-3"' in bad.text  # the input as sent, to correct
    empty = client.post(url, data={"csrf": csrf, "price": "", "was_price": "20.00"})
    assert empty.status_code == 200 and "would remove the field" in empty.text
    later = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    CatalogWriter(tenants).patch(
        STOCKED, "2", {"price": 25.0, "updateTime": later}
    )  # a client's future write
    stale = client.post(url, data={"csrf": csrf, "price": "30", "was_price": "20.00"})
    assert stale.status_code == 409 and 'data-testid="stale"' in stale.text
    assert CatalogWriter(tenants).product(STOCKED, "2").fields["price"] == 25.0
    missing = client.get(f"/console/{STOCKED}/products/nope")
    assert missing.status_code == 404 and "not found" in missing.text


def test_the_catalog_scopes_and_csrf_guard_the_page(env: tuple[TestClient, AuthKit, Tenants]) -> None:
    client, kit, tenants = env
    csrf = sign_in(client, kit.token([STOCKED], scopes=[SEARCH_READ, CATALOG_READ]))
    page = client.get(f"/console/{STOCKED}/products/1")
    assert page.status_code == 200 and "needs the catalog:write scope" in page.text
    refused = client.post(
        f"/console/{STOCKED}/products/1", data={"csrf": csrf, "price": "1", "was_price": "2"}
    )
    assert refused.status_code == 403
    sign_in(client, kit.token([STOCKED], scopes=[SEARCH_READ]))
    assert ">Products</a>" not in client.get(f"/console/{STOCKED}/rules").text
    assert client.get(f"/console/{STOCKED}/products/1").status_code == 403
    csrf = sign_in(client, kit.token([STOCKED], scopes=[CATALOG_READ, CATALOG_WRITE]))
    forged = client.post(f"/console/{STOCKED}/products/1", data={"price": "1", "was_price": "2"})
    assert forged.status_code == 403
    assert CatalogWriter(tenants).sequence(STOCKED) == 0


def test_a_change_partly_stale_saves_the_rest_and_names_what_it_skipped(
    env: tuple[TestClient, AuthKit, Tenants],
) -> None:
    client, kit, tenants = env
    csrf = sign_in(client, kit.token([STOCKED], scopes=[CATALOG_READ, CATALOG_WRITE]))
    later = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    CatalogWriter(tenants).patch(STOCKED, "2", {"price": 25.0, "updateTime": later})
    form = {"csrf": csrf, "price": "30", "was_price": "20.00",
            "availability": "BACKORDER", "was_availability": "OUT_OF_STOCK"}  # fmt: skip
    saved = client.post(f"/console/{STOCKED}/products/2", data=form)
    assert (
        saved.status_code == 200
        and 'data-testid="skipped"' in saved.text
        and "Not changed: price" in saved.text
    )
    assert field(saved.text, "availability") == "BACKORDER" and field(saved.text, "price").startswith("25.00")


def test_the_history_comes_in_pages_of_fifty(env: tuple[TestClient, AuthKit, Tenants]) -> None:
    client, kit, tenants = env
    writer = CatalogWriter(tenants)
    for i in range(53):
        writer.patch(STOCKED, "1", {"stock": i})
    sign_in(client, kit.token([STOCKED], scopes=[CATALOG_READ]))
    first = client.get(f"/console/{STOCKED}/products/1").text
    rows = re.findall(r'<tr data-seq="(\d+)">', first)
    assert rows[0] == "53" and len(rows) == 50 and "page 1 of 2" in first and 'href="?page=2"' in first
    second = client.get(f"/console/{STOCKED}/products/1", params={"page": 2}).text
    assert re.findall(r'<tr data-seq="(\d+)">', second) == ["3", "2", "1"] and 'href="?page=1"' in second
