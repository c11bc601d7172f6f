"""The stock policy in search (issue 41, "Stock"): ``hide`` never returns a product out of stock (totals
and facets agree), ``bury`` puts it after every product in stock with each group's order kept (by
relevance and by price), ``show`` changes nothing, and a request's ``storeId`` filters or boosts by that
store's inventory. Each holds for an index built whole from a catalog version and for one that followed
product writes live."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.support.waiting import wait_until

from aisle.catalog.compaction import compact
from aisle.catalog.datasets.common import tenant_files
from aisle.catalog.importer import import_catalog
from aisle.catalog.writer import CatalogWriter
from aisle.core.config import Settings
from aisle.core.stock import StockConfig
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import Attribute, AttributeConfiguration, GlobalConfiguration
from aisle.search.rules.model import RuleBody
from aisle.search.rules.store import RuleStore
from aisle.services.search.app import create_app

# relevance for "shoe": 1 and 3 say it twice, so they come first; prices order them otherwise
CATALOG = """sku,name,maker,cost,availability
1,Red Shoe Running Shoe,Nike,50,IN_STOCK
2,Blue Shoe,Nike,30,OUT_OF_STOCK
3,Green Shoe Walking Shoe,Puma,40,
4,Black Shoe,Puma,20,BACKORDER
5,White Shoe,Asics,10,OUT_OF_STOCK
"""
POLICIES = {
    "shown": StockConfig(),
    "hidden": StockConfig(policy="hide"),
    "buried": StockConfig(policy="bury"),
    "boosted": StockConfig(policy="bury", store="boost"),
}


def attributes() -> AttributeConfiguration:
    return AttributeConfiguration(
        id_source="sku",
        attributes=[
            Attribute(name="title", type="text", source="name", role="title", searchable=True),
            Attribute(name="brand", source="maker", role="brand", filterable=True, facetable=True),
            Attribute(
                name="price", type="number", source="cost", role="price", filterable=True, sortable=True
            ),
            Attribute(name="availability", filterable=True, facetable=True),
        ],
    )


def settings_for(tmp_path: Path) -> Settings:
    return Settings(
        auth="off",
        storage_url=f"file://{tmp_path / 'bucket'}",
        data_dir=tmp_path / "data",
        predict_url="http://127.0.0.1:9",
        search_budget_ms=60_000,
        catalog_compact_seconds=0,  # only the follower makes a write searchable
        catalog_check_seconds=0,
        catalog_follow_seconds=0.01,
    )


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    settings = settings_for(tmp_path)
    tenants = Tenants(open_blob_store(settings.storage_url), ttl=0)
    source = tmp_path / "stock.csv"
    source.write_text(CATALOG)
    for tenant, stock in POLICIES.items():
        tenants.write_config(tenant, tenant_files(attributes(), GlobalConfiguration(stock=stock)))
        import_catalog(tenants, tenant, source)
    return settings


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings, preload=False)) as c:
        yield c


def search(client: TestClient, tenant: str, query: str = "shoe", **body: Any) -> dict[str, Any]:
    r = client.post("/search", json={"tenant": tenant, "query": query, **body})
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def ids(answer: dict[str, Any]) -> list[str]:
    return [p["id"] for p in answer["products"]]


def reflects(client: TestClient, tenant: str, sequence: int, **body: Any) -> dict[str, Any] | None:
    answer = search(client, tenant, **body)
    return answer if answer["catalogSequence"] >= sequence else None


def test_show_hide_and_bury_on_a_built_index(client: TestClient) -> None:
    shown = search(client, "shown", facets=["availability"])
    assert ids(shown)[:2] == ["1", "3"] and sorted(ids(shown)) == ["1", "2", "3", "4", "5"]
    assert ids(search(client, "shown", sort="price_asc")) == ["5", "4", "2", "3", "1"]

    hidden = search(client, "hidden", facets=["availability", "brand"])
    assert sorted(ids(hidden)) == ["1", "3", "4"] and hidden["total"] == 3
    assert {f["value"] for f in hidden["facets"]["availability"]} == {"IN_STOCK", "BACKORDER"}
    assert hidden["facets"]["brand"] == [{"value": "Puma", "count": 2}, {"value": "Nike", "count": 1}]
    assert ids(search(client, "hidden", sort="price_asc")) == ["4", "3", "1"]
    paged = [ids(search(client, "hidden", size=1, **{"from": n})) for n in range(4)]
    assert paged[3] == [] and sorted(p[0] for p in paged[:3]) == ["1", "3", "4"]

    buried = search(client, "buried")
    in_stock = [i for i in ids(shown) if i in ("1", "3", "4")]
    out = [i for i in ids(shown) if i in ("2", "5")]
    assert ids(buried) == in_stock + out and buried["total"] == 5
    # the order's boost is not in the scores answered (nor in those the hybrid stage or a ranker read)
    plain = {p["id"]: p["score"] for p in shown["products"]}
    assert all(abs(p["score"] - plain[p["id"]]) < 0.01 for p in buried["products"]), buried["products"]
    assert ids(search(client, "buried", sort="price_asc")) == ["4", "3", "1", "5", "2"]
    assert ids(search(client, "buried", sort="price_desc")) == ["1", "3", "4", "2", "5"]
    pages = [ids(search(client, "buried", sort="price_asc", size=2, **{"from": n})) for n in (0, 2, 4)]
    assert pages == [["4", "3"], ["1", "5"], ["2"]]


def test_a_stock_write_moves_the_product_live(client: TestClient) -> None:
    assert "2" not in ids(search(client, "hidden"))
    r = client.patch("/products/2", params={"tenant": "hidden"}, json={"availability": "IN_STOCK"})
    assert r.status_code == 200, r.text
    back = wait_until(lambda: reflects(client, "hidden", r.json()["sequence"]), "the patch is searched")
    assert "2" in ids(back) and back["total"] == 4
    r = client.patch("/products/1", params={"tenant": "buried"}, json={"availability": "OUT_OF_STOCK"})
    last = wait_until(lambda: reflects(client, "buried", r.json()["sequence"]), "the patch is searched")
    assert ids(last)[-3:] == sorted(ids(last)[-3:], key=["1", "2", "5"].index) and ids(last)[0] == "3"
    assert ids(search(client, "buried", sort="price_asc")) == ["4", "3", "5", "2", "1"]


def stores_of(client: TestClient, tenant: str) -> None:
    """Store ``north`` has 1 and 2 in stock and 3 out; ``south`` has 4 (two writes: one a batch)."""
    q = {"tenant": tenant}
    assert (
        client.put("/products/1/inventory/north", params=q, json={"availability": "IN_STOCK"}).status_code
        == 200
    )
    batch = [
        {"id": "2", "storeId": "north", "availability": "PREORDER", "quantity": 2},
        {"id": "3", "storeId": "north", "availability": "OUT_OF_STOCK", "quantity": 0},
        {"id": "4", "storeId": "south", "availability": "IN_STOCK", "quantity": 9},
    ]
    r = client.post("/products/inventory/batch", params=q, json={"operations": batch})
    assert r.status_code == 200 and r.json()["applied"] == 3, r.text
    wait_until(lambda: reflects(client, tenant, r.json()["sequence"]), "the inventories are searched")


def check_stores(client: TestClient) -> None:
    north = search(client, "shown", storeId="north", facets=["brand"])
    assert sorted(ids(north)) == ["1", "2"] and north["facets"]["brand"] == [{"value": "Nike", "count": 2}]
    linked = client.get("/search", params={"tenant": "shown", "q": "shoe", "storeId": "north"})  # fast lane
    assert linked.status_code == 200 and sorted(ids(linked.json())) == ["1", "2"]
    assert ids(search(client, "hidden", storeId="south")) == ["4"]  # the store's entry decides
    assert ids(search(client, "shown", storeId="nowhere")) == []
    boosted = ids(search(client, "boosted", storeId="north"))
    assert boosted[:2] == ["1", "2"] and boosted[2:] == ["3", "4", "5"]  # then the policy: 5 buried
    assert ids(search(client, "boosted", storeId="north", sort="price_asc")) == ["1", "2", "4", "3", "5"]


def test_store_filter_and_boost_after_live_writes(client: TestClient) -> None:
    for tenant in ("shown", "hidden", "boosted"):
        stores_of(client, tenant)
    check_stores(client)


def test_store_filter_and_boost_on_a_built_index(settings: Settings) -> None:
    tenants = Tenants(open_blob_store(settings.storage_url), ttl=0)
    with TestClient(create_app(settings, preload=False)) as client:
        for tenant in ("shown", "hidden", "boosted"):
            stores_of(client, tenant)
    for tenant in ("shown", "hidden", "boosted"):
        assert compact(tenants, tenant) is not None
        assert CatalogWriter(tenants).stores(tenant) == ["north", "south"]
    with TestClient(create_app(settings, preload=False)) as client:  # opens the versions built whole
        check_stores(client)
        assert client.get("/stores", params={"tenant": "shown"}).json() == {"stores": ["north", "south"]}


def test_a_pinned_product_out_of_stock_is_hidden_too(settings: Settings) -> None:
    """A merchandiser's pin never brings back what the policy hides (the filter comes before the rules'
    actions); under bury the pin keeps its place."""
    tenants = Tenants(open_blob_store(settings.storage_url), ttl=0)
    pin = {
        "name": "Blue first",
        "conditions": {"query": {"match": "contains", "value": "shoe"}},
        "actions": [{"type": "pin", "items": [{"productId": "2", "position": 1}]}],
    }
    for tenant in ("hidden", "buried"):
        RuleStore(tenants.scope(tenant)).create(RuleBody.model_validate(pin), "blue")
    with TestClient(create_app(settings, preload=False)) as client:
        hidden = search(client, "hidden")
        assert hidden["queryGraph"]["rules"] and "2" not in ids(hidden) and hidden["total"] == 3
        assert ids(search(client, "buried"))[0] == "2"


def test_a_bad_store_id_is_refused(client: TestClient) -> None:
    r = client.post("/search", json={"tenant": "shown", "query": "", "storeId": "no store"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "validation_error"
    assert "storeId" in r.json()["error"]["message"]
    linked = client.get("/search", params={"tenant": "shown", "q": "", "storeId": "no store"})
    assert linked.status_code == 422 and "storeId" in linked.json()["error"]["message"]
