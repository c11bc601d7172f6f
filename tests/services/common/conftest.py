"""A small real tenant (``shop``: 8 products, a deployed model, container ``c1``) behind real services."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from tests.support.recs import CooccurrenceRecommender, register_and_deploy, write_tenant

from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.recs.containers import ContainerBody, ContainerStore
from aisle.recs.models.base import ModelType

PRODUCTS = pl.DataFrame(
    {
        "id": [f"p{i}" for i in range(8)],
        "title": [f"Product {i}" for i in range(8)],
        "price": [float(10 * (i + 1)) for i in range(8)],
        "brand": ["nike", "puma"] * 4,
        "category": ["shoes"] * 4 + ["bags"] * 4,
    }
)
SESSIONS = [["p0", "p1"], ["p0", "p2"], ["p1", "p3"]]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Auth off, a bucket with tenant ``shop`` (catalog, deployed model ``m1``, container ``c1``)."""
    settings = Settings(auth="off", storage_url=f"file://{tmp_path / 'bucket'}", data_dir=tmp_path / "data")
    store = open_blob_store(settings.storage_url)
    write_tenant(store, "shop", PRODUCTS)
    register_and_deploy(store, "shop", "m1", ModelType.CUSTOMERS_ALSO_VIEW)
    slot = {"slotConfigId": "main", "modelId": "m1", "itemCount": 4}
    ContainerStore(Tenants(store).scope("shop")).create(
        "c1", ContainerBody.model_validate({"slotConfigurations": [slot]})
    )
    return settings


def predict_app(settings: Settings) -> object:
    from aisle.recs.serving import RegistryModelSource
    from aisle.services.predict.app import create_app

    model = CooccurrenceRecommender(SESSIONS)
    return create_app(settings, models=RegistryModelSource(lambda scope, record: model))


def search_app(settings: Settings) -> object:
    from aisle.services.search.app import create_app

    return create_app(settings.model_copy(update={"predict_url": "http://127.0.0.1:9"}), preload=False)
