"""Product writes searchable without a rebuild (issue 41, "Visible without rebuilding"): every search
app applies the change log to its open index, with background compaction off, so nothing else could
make a write searchable. Text match, price sort, filters and facets, ``GET /item``, two workers on one
data dir, a worker started after the writes, a compaction in the middle of writes, and searches that
run while entries are applied."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.support.waiting import wait_until

from aisle.catalog.compaction import compact
from aisle.catalog.datasets.common import tenant_files
from aisle.catalog.importer import import_catalog
from aisle.catalog.store import CatalogStore
from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import Attribute, AttributeConfiguration, GlobalConfiguration
from aisle.services.search.app import create_app

TENANT = "live"
Q = {"tenant": TENANT}
CATALOG = """sku,name,maker,cost,fabric
1,Red Running Shoe,Nike,49.5,mesh
2,Blue Shirt,Puma,20,cotton
3,Green Cap,Puma,9,cotton
"""


def attributes() -> AttributeConfiguration:
    """A searchable title, a brand facet, a price to sort, filter and facet, and ``fabric``: filterable
    and searchable but not returned (a patch must not lose it)."""
    return AttributeConfiguration(
        id_source="sku",
        attributes=[
            Attribute(name="title", type="text", source="name", role="title", searchable=True),
            Attribute(name="brand", source="maker", role="brand", filterable=True, facetable=True),
            Attribute(
                name="price", type="number", source="cost", role="price", filterable=True, facetable=True,
                sortable=True,
            ),
            Attribute(name="fabric", filterable=True, searchable=True, returned=False),
        ],
    )  # fmt: skip


def settings_for(tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "auth": "off",
        "storage_url": f"file://{tmp_path / 'bucket'}",
        "data_dir": tmp_path / "data",
        "predict_url": "http://127.0.0.1:9",
        "search_budget_ms": 60_000,
        "catalog_compact_seconds": 0,  # only the follower makes a write searchable
        "catalog_check_seconds": 0,
        "catalog_follow_seconds": 0.01,
    }
    return Settings(**(values | overrides))


def make_tenant(settings: Settings, tmp_path: Path) -> Tenants:
    tenants = Tenants(open_blob_store(settings.storage_url), ttl=0)
    tenants.write_config(TENANT, tenant_files(attributes(), GlobalConfiguration()))
    source = tmp_path / "live.csv"
    source.write_text(CATALOG)
    import_catalog(tenants, TENANT, source)
    return tenants


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    settings = settings_for(tmp_path)
    make_tenant(settings, tmp_path)
    return settings


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings, preload=False)) as c:
        yield c


def search(client: TestClient, query: str = "", **body: Any) -> dict[str, Any]:
    r = client.post("/search", json={"tenant": TENANT, "query": query, **body})
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def ids(answer: dict[str, Any]) -> list[str]:
    return [p["id"] for p in answer["products"]]


def reflects(client: TestClient, sequence: int, query: str = "", **body: Any) -> dict[str, Any] | None:
    """The answer once it reflects change-log entry ``sequence`` (None before)."""
    answer = search(client, query, **body)
    return answer if answer["catalogSequence"] >= sequence else None


def written(response: Any) -> int:
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "applied", response.text
    return int(response.json()["sequence"])


def test_a_put_is_searched_without_any_compaction(client: TestClient) -> None:
    assert search(client, "trail")["products"] == [] and search(client)["catalogSequence"] == 0
    seq = written(
        client.put("/products/9", params=Q, json={"title": "Trail Boot", "brand": "Salomon", "price": 120})
    )
    answer = wait_until(lambda: reflects(client, seq, "trail"), "the write is searched")
    assert ids(answer) == ["9"] and answer["products"][0]["title"] == "Trail Boot"
    assert client.get("/item/9", params=Q).json()["brand"] == "Salomon"
    assert "catalogSequence" in client.get("/search", params={"q": "trail", "tenant": TENANT}).json()


def test_a_new_word_is_not_corrected_into_an_old_one(client: TestClient) -> None:
    assert ids(search(client, "shift")) == ["2"]  # "shift" is one edit from the catalog's "shirt"
    knob = {"title": "Gear Shift Knob", "brand": "Momo", "price": 35}
    seq = written(client.put("/products/6", params=Q, json=knob))
    answer = wait_until(lambda: reflects(client, seq, "shift"), "the write is searched")
    assert ids(answer) == ["6"] and answer["queryGraph"]["corrections"] == []


def test_a_price_patch_moves_the_product_in_sort_filter_and_facet(client: TestClient) -> None:
    assert ids(search(client, sort="price_asc")) == ["3", "2", "1"]
    seq = written(client.patch("/products/1", params=Q, json={"price": 5}))
    cheapest = wait_until(lambda: reflects(client, seq, sort="price_asc"), "the patch is searched")
    assert ids(cheapest) == ["1", "3", "2"] and cheapest["products"][0]["price"] == 5
    under = search(client, filters=[{"field": "price", "value": {"lt": 8}}], facets=["price", "brand"])
    assert ids(under) == ["1"] and under["facets"]["brand"] == [{"value": "Nike", "count": 1}]
    assert sum(bucket["count"] for bucket in under["facets"]["price"]) == 1
    assert ids(search(client, "mesh")) == ["1"]  # the fields a patch leaves alone stay, returned or not
    assert ids(search(client, "running", filters=[{"field": "fabric", "value": "mesh"}])) == ["1"]


def test_a_delete_leaves_search_and_item(client: TestClient) -> None:
    assert client.get("/item/2", params=Q).status_code == 200
    seq = written(client.delete("/products/2", params=Q))
    answer = wait_until(lambda: reflects(client, seq, "shirt"), "the delete is searched")
    assert answer["products"] == [] and answer["total"] == 0
    assert client.get("/item/2", params=Q).status_code == 404
    assert sorted(ids(search(client))) == ["1", "3"]


def test_a_new_brand_filters_whatever_its_case(client: TestClient) -> None:
    seq = written(
        client.put("/products/7", params=Q, json={"title": "Wool Hat", "brand": "Fjällräven", "price": 30})
    )
    wait_until(lambda: reflects(client, seq), "the write is searched")
    for spelled in ("Fjällräven", "fjällräven", "FJÄLLRÄVEN"):
        assert ids(search(client, filters=[{"field": "brand", "value": spelled}])) == ["7"], spelled
    facets = search(client, facets=["brand"])["facets"]["brand"]
    assert {"value": "Fjällräven", "count": 1} in facets


def test_two_workers_on_one_data_dir_both_serve_a_write(settings: Settings) -> None:
    with (
        TestClient(create_app(settings, preload=False)) as one,
        TestClient(create_app(settings, preload=False)) as two,
    ):
        assert search(one, "shirt")["total"] == search(two, "shirt")["total"] == 1  # both open the index
        seq = written(one.patch("/products/2", params=Q, json={"title": "Blue Linen Shirt"}))
        for worker in (one, two):
            answer = wait_until(lambda w=worker: reflects(w, seq, "linen"), "each worker serves the write")
            assert ids(answer) == ["2"]
        seq = written(two.delete("/products/2", params=Q))
        for worker in (one, two):
            assert (
                wait_until(lambda w=worker: reflects(w, seq, "linen"), "each serves the delete")["total"] == 0
            )


def test_a_worker_started_after_the_writes_serves_them(settings: Settings) -> None:
    with TestClient(create_app(settings, preload=False)) as first:
        seq = written(
            first.put("/products/8", params=Q, json={"title": "Rain Jacket", "brand": "Arc", "price": 200})
        )
        seq = written(first.patch("/products/8", params=Q, json={"price": 150}))
    with TestClient(create_app(settings, preload=False)) as later:
        answer = search(later, "jacket")  # opened with the log tail applied: no wait
        assert answer["catalogSequence"] == seq and ids(answer) == ["8"]
        assert answer["products"][0]["price"] == 150


def test_a_compaction_between_writes_loses_nothing(settings: Settings) -> None:
    tenants = Tenants(open_blob_store(settings.storage_url), ttl=0)
    settings = settings.model_copy(update={"catalog_settle_seconds": 0.0})  # swapped in between writes
    with TestClient(create_app(settings, preload=False)) as client:
        search(client)
        indexes = client.app.state.search.engine.indexes  # type: ignore[attr-defined]
        prices = {}
        served: list[int] = []  # the sequence each search answered
        seq = 0
        for n in range(12):
            pid = str(100 + n)
            prices[pid] = float(n + 1)
            seq = written(
                client.put(f"/products/{pid}", params=Q, json={"title": f"Sock {n}", "price": n + 1})
            )
            if n in (4, 8):
                assert compact(tenants, TENANT) is not None
            served.append(search(client, "sock")["catalogSequence"])
        seq = written(client.patch("/products/100", params=Q, json={"price": 99}))
        prices["100"] = 99.0
        answer = wait_until(lambda: reflects(client, seq, "sock", size=50), "every write is searched")
        assert {p["id"]: p["price"] for p in answer["products"]} == prices
        assert served == sorted(served)  # a new version's index never answers an older state
        current = CatalogStore(tenants.scope(TENANT)).current_version()
        wait_until(lambda: indexes.serving_version(TENANT) == current, "the last version is served")
        answer = search(client, "sock", size=50)
        assert answer["catalogSequence"] == seq
        assert {p["id"]: p["price"] for p in answer["products"]} == prices


def test_searches_while_entries_are_applied_never_fail(client: TestClient) -> None:
    failures: list[str] = []
    done = threading.Event()
    answers = 0
    indexes = client.app.state.search.engine.indexes  # type: ignore[attr-defined]
    lineages: set[str] = set()  # each reopening of the index would be a new one

    def read() -> None:
        nonlocal answers
        while not done.is_set():
            r = client.post(
                "/search", json={"tenant": TENANT, "query": "sock", "facets": ["brand"], "size": 50}
            )
            if r.status_code != 200:
                failures.append(r.text)
            answers += 1
            lineages.add(indexes.get(TENANT).lineage)  # a check of the pointer too (check_every 0)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        seq = 0
        for n in range(30):
            if n % 3 == 2:
                seq = written(client.delete(f"/products/{200 + n - 1}", params=Q))
            else:
                seq = written(
                    client.put(f"/products/{200 + n}", params=Q, json={"title": f"Sock {n}", "brand": "B"})
                )
        final = wait_until(lambda: reflects(client, seq, "sock", size=50), "every write is searched")
    finally:
        done.set()
        reader.join()
    assert answers > 0 and failures == []
    assert len(final["products"]) == 10
    assert len(lineages) <= 2  # the version's, then its followed copy: a check mid-apply reopens nothing


def test_a_version_compacted_during_writes_is_served_once_they_settle(settings: Settings) -> None:
    tenants = Tenants(open_blob_store(settings.storage_url), ttl=0)
    settings = settings.model_copy(update={"catalog_settle_seconds": 0.5})
    with TestClient(create_app(settings, preload=False)) as client:
        search(client)
        indexes = client.app.state.search.engine.indexes  # type: ignore[attr-defined]
        opened = indexes.serving_version(TENANT)
        seq = written(client.patch("/products/1", params=Q, json={"price": 77}))
        folded = compact(tenants, TENANT)
        assert folded is not None and folded.version != opened
        # no search asks: the follower's own catalog check builds it once the writes settled
        wait_until(
            lambda: indexes.serving_version(TENANT) == folded.version, "the compacted version is served"
        )
        answer = search(client, "", size=50)
        assert answer["catalogSequence"] == seq
        assert {p["id"]: p["price"] for p in answer["products"]}["1"] == 77
