"""A shopper can set aside what query understanding read in the words (issue 44's removable chips):
``ignoreUnderstood`` names the attributes not to filter or boost by, the words still searched."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.search.indexes import IndexRegistry
from aisle.search.pipeline import SearchPipeline
from aisle.search.query import SearchQuery
from aisle.services.search.app import create_app


def test_an_understood_attribute_set_aside_no_longer_filters(demo_env: Any) -> None:
    tenants = Tenants(open_blob_store(demo_env.storage_url), ttl=0)
    index = IndexRegistry(tenants, demo_env.data_dir).get("fashion")
    config, pipeline = tenants.config("fashion"), SearchPipeline(budget_s=5.0)
    read = pipeline.search(index, config, SearchQuery("red shirt", size=20))
    fields = {a.field for a in read.query_graph.attributes}
    assert "color" in fields and read.query_graph.stage == "strict"
    assert all(p["color"] == "Red" for p in read.products)  # filtered by the colour read in the words
    aside = pipeline.search(index, config, SearchQuery("red shirt", size=20, ignore_understood=["color"]))
    assert "color" not in {a.field for a in aside.query_graph.attributes}
    assert fields - {"color"} <= {a.field for a in aside.query_graph.attributes}  # the others still apply
    assert aside.total >= read.total  # "red" is a word of the text now, not the colour filter
    # a price phrase: its constraint set aside, the rest of the query searched
    priced = pipeline.search(index, config, SearchQuery("watch under 2000", size=20))
    price = next(a.name for a in index.config.attributes if a.role is not None and a.role.value == "price")
    unpriced = pipeline.search(
        index, config, SearchQuery("watch under 2000", size=20, ignore_understood=[price])
    )
    assert all(p["price"] <= 2000 for p in priced.products)
    assert unpriced.total > priced.total and any(p["price"] > 2000 for p in unpriced.products)
    assert priced.query_graph.price is not None and unpriced.query_graph.price is None


def test_the_http_door_takes_ignore_understood(demo_env: Any) -> None:
    settings = Settings(storage_url=demo_env.storage_url, data_dir=demo_env.data_dir, auth="off")
    body = {"query": "red shirt", "tenant": "fashion", "size": 5, "analytics": False}
    with TestClient(create_app(settings)) as client:
        aside = client.post("/search", json={**body, "ignoreUnderstood": ["color"]}).json()
        too_long = client.post("/search", json={**body, "ignoreUnderstood": ["x" * 65]})
        got = client.get(
            "/search", params={"tenant": "fashion", "q": "red shirt", "size": 5, "ignoreUnderstood": "color"}
        ).json()
    assert "color" not in {a["field"] for a in aside["queryGraph"]["attributes"]}
    assert [p["id"] for p in got["products"]] == [p["id"] for p in aside["products"]]
    assert too_long.status_code == 422
