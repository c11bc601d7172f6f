"""POST /predict with a popularity artifact: cold seeds are backfilled by popularity (or trending), a
seed the catalog does not know gets the tenant's most popular products, and without an artifact the
backfill is the catalog-order one predict always had."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import polars as pl
import pytest
from fastapi.testclient import TestClient
from tests.services.predict.conftest import SESSIONS
from tests.support.recs import CooccurrenceRecommender

from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.recs import popularity_store
from aisle.recs.popularity import DAY_S, PopularityParams
from aisle.recs.serving import RegistryModelSource
from aisle.services.predict.app import create_app

# p9's category (hats) is p8..p11; the model (conftest's sessions) knows only p0..p5
HAT_VIEWS = {"p11": 5, "p10": 3, "p8": 1}
RECENT = {"p8": 6}  # bought this week: trending, while p11 and p10 were viewed weeks ago
BAG_PURCHASES = {"p6": 4}  # the most popular product overall


def publish(settings: Settings) -> None:
    rows: list[tuple[str, str, float]] = []
    for item, n in HAT_VIEWS.items():
        rows += [(item, "view", 20.0)] * n
    for item, n in RECENT.items():
        rows += [(item, "view", 1.0)] * n
    for item, n in BAG_PURCHASES.items():
        rows += [(item, "purchase", 20.0)] * n
    events = pl.DataFrame(
        {
            "item_id": [r[0] for r in rows],
            "event_type": [r[1] for r in rows],
            "ts": [1e9 - r[2] * DAY_S for r in rows],
        }
    )
    scope = Tenants(open_blob_store(settings.storage_url)).scope("shop")
    popularity_store.refresh(scope, events, now=1e9, params=PopularityParams(prior=1.0))


@pytest.fixture
def popular(settings: Settings, shop: str) -> Iterator[TestClient]:
    """Predict started after the artifact was published (its start-up warm-up reads it)."""
    publish(settings)
    model = CooccurrenceRecommender(SESSIONS)
    with TestClient(create_app(settings, models=RegistryModelSource(lambda scope, record: model))) as c:
        yield c


def predict(client: TestClient, seeds: list[str], **params: Any) -> list[tuple[str, str | None]]:
    body = {"containerId": "c1", "productIds": seeds, "predictParams": {"debug": True, **params}}
    r = client.post("/predict", params={"tenant": "shop"}, json=body)
    assert r.status_code == 200, r.text
    return [(i["id"], i["explanation"]["backfillFrom"]) for i in r.json()["response_data"]]


def test_without_an_artifact_a_cold_seed_gets_its_category_in_catalog_order(client: TestClient) -> None:
    assert predict(client, ["p9"]) == [("p8", "category"), ("p10", "category"), ("p11", "category")]
    assert predict(client, ["unknown"]) == []


def test_a_cold_seed_gets_its_category_by_popularity_then_the_most_popular(popular: TestClient) -> None:
    # weighted 30-day events: p6 20 (4 purchases); among the hats p8 7 views, p11 5, p10 3
    got = predict(popular, ["p9"])
    assert got == [
        ("p8", "category:popular"),
        ("p11", "category:popular"),
        ("p10", "category:popular"),
        ("p6", "popular"),
    ]


def test_trending_order_and_catalog_order_on_request(popular: TestClient) -> None:
    trending = predict(popular, ["p9"], backfillOrder="trending")
    assert trending[0] == ("p8", "category:trending")  # the only product with events this week
    assert [s for _, s in trending] == ["category:trending"] * 3 + ["trending"]
    assert predict(popular, ["p9"], backfillOrder="catalog") == [
        ("p8", "category"),
        ("p10", "category"),
        ("p11", "category"),
    ]


def test_a_seed_unknown_to_the_catalog_gets_the_most_popular_products(popular: TestClient) -> None:
    assert predict(popular, ["unknown"]) == [
        ("p6", "popular"),
        ("p8", "popular"),
        ("p11", "popular"),
        ("p10", "popular"),
    ]


def test_a_seed_the_model_knows_keeps_the_models_items_first(popular: TestClient) -> None:
    assert predict(popular, ["p0"]) == [("p1", None), ("p2", None), ("p3", None), ("p4", None)]


def tied_app(settings: Settings) -> Any:
    """Predict over a model that scores p10 and p11 equally for seed p0 (one session each)."""
    model = CooccurrenceRecommender([["p0", "p10"], ["p0", "p11"]])
    return create_app(settings, models=RegistryModelSource(lambda scope, record: model))


def test_equal_model_scores_go_to_the_more_popular_item_first(settings: Settings, shop: str) -> None:
    with TestClient(tied_app(settings)) as c:
        assert predict(c, ["p0"])[:2] == [("p10", None), ("p11", None)]  # the model's order (by id)
    publish(settings)
    with TestClient(tied_app(settings)) as c:
        assert predict(c, ["p0"])[:2] == [("p11", None), ("p10", None)]  # p11: 5 views, p10: 3


def test_the_slots_backfill_order_applies_and_a_bad_order_is_422(
    settings: Settings, popular: TestClient
) -> None:
    from aisle.recs.containers import ContainerBody, ContainerStore

    slot = {"slotConfigId": "main", "modelId": "m1", "itemCount": 4, "options": {"backfillOrder": "trending"}}
    scope = Tenants(open_blob_store(settings.storage_url)).scope("shop")
    ContainerStore(scope).create("rising", ContainerBody.model_validate({"slotConfigurations": [slot]}))
    body = {"containerId": "rising", "productIds": ["p9"], "predictParams": {"debug": True}}
    items = popular.post("/predict", params={"tenant": "shop"}, json=body).json()["response_data"]
    assert [i["explanation"]["backfillFrom"] for i in items] == ["category:trending"] * 3 + ["trending"]
    bad = {"containerId": "c1", "productIds": ["p9"], "predictParams": {"backfillOrder": "random"}}
    r = popular.post("/predict", params={"tenant": "shop"}, json=bad)
    assert r.status_code == 422 and r.json()["error"]["code"] == "validation_error"


def test_a_new_version_is_served_after_the_check_interval(
    settings: Settings, client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aisle.recs.serving import tenants

    assert predict(client, ["unknown"]) == []  # read at start-up: no artifact yet
    publish(settings)
    assert predict(client, ["unknown"]) == []  # within POPULARITY_TTL_S the pointer is not read again
    monkeypatch.setattr(tenants, "POPULARITY_TTL_S", 0.0)
    assert [i for i, _ in predict(client, ["unknown"])] == ["p6", "p8", "p11", "p10"]
