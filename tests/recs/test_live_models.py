"""GOOD_BETTER_BEST served with the product writes since its training (issue 41): re-tiered prices."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from tests.support.recs import register_and_deploy, write_tenant

from aisle.catalog.changes import ChangeLog, Op
from aisle.core.events import open_event_store_url
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.recs.containers import ContainerBody, ContainerStore
from aisle.recs.models.base import ModelType
from aisle.recs.models.good_better_best import train_good_better_best
from aisle.recs.serving import PredictEngine, PredictParams, PredictQuery, RegistryModelSource

T = "shop"
PRODUCTS = pl.DataFrame(
    {
        "id": [f"p{i}" for i in range(6)],
        "title": [f"Shoe {i}" for i in range(6)],
        "price": [10.0, 12.0, 30.0, 35.0, 90.0, 100.0],
        "category": ["shoes"] * 6,
    }
)


def tiers(engine: PredictEngine) -> list[tuple[str, str | None, float | None]]:
    params = PredictParams(strict_filtering=True, return_product=True)
    items = engine.predict(T, PredictQuery("gbb", ["p0"], params=params))
    return sorted(((i.id, i.label, i.price) for i in items), key=lambda t: t[2] or 0.0)  # cheapest first


def test_a_written_price_moves_a_product_to_its_new_tier(blob_store: BlobStore, tmp_path: Path) -> None:
    write_tenant(blob_store, T, PRODUCTS)
    register_and_deploy(blob_store, T, "gbb", ModelType.GOOD_BETTER_BEST)
    scope = Tenants(blob_store).scope(T)
    ContainerStore(scope).create("gbb", ContainerBody.model_validate({
        "slotConfigurations": [{"slotConfigId": "main", "modelId": "gbb", "itemCount": 3}]}))  # fmt: skip
    model = train_good_better_best(PRODUCTS)
    events = open_event_store_url(f"sqlite://{tmp_path / 'events.sqlite3'}")
    engine = PredictEngine(Tenants(blob_store), events, RegistryModelSource(lambda scope, record: model))
    assert tiers(engine) == [("p1", "good", 12.0), ("p3", "better", 35.0), ("p5", "best", 100.0)]
    log = ChangeLog(scope)
    assert log.create(1, [Op("patch", "p3", 1, {"price": 200.0})])  # better -> best
    engine.tenant_cache.follow(T)
    assert tiers(engine) == [("p1", "good", 12.0), ("p2", "better", 30.0), ("p5", "best", 100.0)]
    assert log.create(2, [Op("delete", "p5", 2)])
    engine.tenant_cache.follow(T)
    assert tiers(engine) == [("p1", "good", 12.0), ("p2", "better", 30.0), ("p3", "best", 200.0)]
    assert model.tiers("p0")[2].item_id == "p5"  # the trained model itself is left as it was


def test_a_new_product_joins_its_tier_and_a_moved_one_leaves_its_leaf() -> None:
    model = train_good_better_best(PRODUCTS)
    live = model.with_changes({"n1": (11.0, "shoes"), "p1": (12.0, "boots")})
    first = live.tiers("p0")[0]
    assert (first.item_id, first.label) == ("n1", "good")
    assert "p1" not in [s.item_id for s in live.tiers("p0")] and live.tiers("p1") == []  # boots: no tiers
    assert "n1" not in model.index and model.tiers("p0")[0].item_id == "p1"
