"""Replaying a real REES46 visitor through POST /events changes what POST /predict returns.

The edit and predict services are separate app instances with their own event-store connections
(the embedded SQLite file, or a real Redis), as in two processes. The model is the real session kNN
(``aisle.recs.models.also_view``) trained on every *other* visitor's sessions of the same file.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from fastapi.testclient import TestClient
from tests.support.recs import rees46_catalog, register_and_deploy, write_tenant

from aisle.core.config import Settings
from aisle.core.events import open_event_store_url
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.recs.containers import ContainerBody, ContainerStore
from aisle.recs.models.base import ModelType
from aisle.recs.serving import RegistryModelSource
from aisle.services.edit.app import create_app as create_edit
from aisle.services.predict.app import create_app as create_predict

T = {"tenant": "rees46"}


@pytest.fixture(scope="module")
def rees46(shared_data: Path) -> pl.DataFrame:
    return pl.read_csv(
        shared_data / "rees46" / "events.csv",
        schema_overrides={"product_id": pl.Utf8, "user_id": pl.Utf8, "category_id": pl.Utf8},
    )


def pick_visitor(events: pl.DataFrame) -> str:
    """The visitor with the most distinct products among those who purchased something."""
    stats = events.group_by("user_id").agg(
        pl.col("product_id").n_unique().alias("products"),
        (pl.col("event_type") == "purchase").sum().alias("bought"),
    )
    return str(
        stats.filter(pl.col("bought") > 0).sort(["products", "user_id"], descending=True)["user_id"][0]
    )


@pytest.fixture(params=["embedded", "redis"])
def services(
    request: pytest.FixtureRequest, tmp_path: Path, rees46: pl.DataFrame
) -> Iterator[tuple[TestClient, TestClient, str]]:
    from aisle.recs.models.also_view import train_session_knn

    redis_url = request.getfixturevalue("redis_url") if request.param == "redis" else None
    settings = Settings(
        auth="off",
        storage_url=f"file://{tmp_path / 'bucket'}",
        data_dir=tmp_path / "data",
        redis_url=redis_url,
    )
    store = open_blob_store(settings.storage_url)
    catalog = rees46_catalog(rees46)
    write_tenant(store, "rees46", catalog, event_types=["view", "cart", "purchase"])
    visitor = pick_visitor(rees46)
    training = rees46.filter(pl.col("user_id") != visitor).select(
        pl.col("user_session").alias("session_id"),
        pl.col("product_id").alias("item_id"),
        pl.col("event_time")
        .str.to_datetime("%Y-%m-%d %H:%M:%S UTC")
        .dt.epoch("s")
        .cast(pl.Float64)
        .alias("ts"),
    )
    model = train_session_knn(training)
    register_and_deploy(store, "rees46", "sknn", ModelType.CUSTOMERS_ALSO_VIEW)
    slot = {"slotConfigId": "main", "modelId": "sknn", "itemCount": 20}
    ContainerStore(Tenants(store).scope("rees46")).create(
        "also-viewed", ContainerBody.model_validate({"slotConfigurations": [slot]})
    )
    if redis_url:
        open_event_store_url(redis_url).clear("rees46")
    source = RegistryModelSource(lambda scope, record: model)
    with (
        TestClient(create_edit(settings, loader=lambda scope, record: model)) as edit,
        TestClient(create_predict(settings, models=source)) as predict,
    ):
        yield edit, predict, visitor
    if redis_url:
        open_event_store_url(redis_url).clear("rees46")


def test_replayed_session_changes_recommendations(
    services: tuple[TestClient, TestClient, str], rees46: pl.DataFrame
) -> None:
    edit, predict, visitor = services
    mine = rees46.filter(pl.col("user_id") == visitor)
    seed = str(mine.filter(pl.col("event_type") == "view")["product_id"][0])
    ask: dict[str, Any] = {"containerId": "also-viewed", "productIds": [seed]}
    before = predict.post("/predict", params=T, json=ask).json()["response_data"]
    assert len(before) == 20

    events = [
        {
            "visitorId": visitor,
            "eventType": row["event_type"],
            "productId": row["product_id"],
            "timestamp": row["event_time"].replace(" UTC", "Z").replace(" ", "T"),
            "sessionId": row["user_session"],
            "price": row["price"],
        }
        for row in mine.iter_rows(named=True)
    ]
    for i in range(0, len(events), 25):
        r = edit.post("/events", params=T, json={"events": events[i : i + 25]})
        assert r.status_code == 202, r.text
    stored = edit.get("/events", params={**T, "visitorId": visitor, "limit": 1000}).json()["events"]
    assert len(stored) == min(len(events), 200) and stored[0]["productId"] == events[-1]["productId"]

    after = predict.post("/predict", params=T, json={**ask, "visitorId": visitor}).json()["response_data"]
    before_ids, after_ids = [i["id"] for i in before], [i["id"] for i in after]
    assert len(after_ids) == 20 and after_ids != before_ids
    assert len(set(after_ids) - set(before_ids)) >= 3  # the session brings in items of its own
    purchased = set(mine.filter(pl.col("event_type") == "purchase")["product_id"].to_list())
    assert purchased and not purchased & set(after_ids)
    # another visitor, and the anonymous request, still get the shared list
    assert [
        i["id"] for i in predict.post("/predict", params=T, json=ask).json()["response_data"]
    ] == before_ids
