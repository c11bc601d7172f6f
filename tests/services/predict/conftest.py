"""A small real tenant behind the predict service: catalog, containers, deployed co-occurrence models."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from fastapi.testclient import TestClient
from tests.support.recs import CooccurrenceRecommender, register_and_deploy, write_tenant

from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.recs.containers import ContainerBody, ContainerStore
from aisle.recs.models.base import ModelType
from aisle.recs.serving import RegistryModelSource
from aisle.services.predict.app import create_app

PRODUCTS = pl.DataFrame(
    {
        "id": [f"p{i}" for i in range(12)],
        "title": [f"Product {i}" for i in range(12)],
        "description": [f"About {i}" for i in range(12)],
        "price": [float(10 * (i + 1)) for i in range(12)],
        "brand": ["nike", "nike", "puma", "puma", "adidas", "adidas"] * 2,
        "category": ["shoes"] * 4 + ["bags"] * 4 + ["hats"] * 4,
    }
)
SESSIONS = [["p0", "p1"]] * 5 + [["p0", "p2"]] * 4 + [["p0", "p3"]] * 3 + [["p0", "p4"]] * 2 + [["p0", "p5"]]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(auth="off", storage_url=f"file://{tmp_path / 'bucket'}", data_dir=tmp_path / "data")


@pytest.fixture
def shop(settings: Settings) -> str:
    store = open_blob_store(settings.storage_url)
    write_tenant(store, "shop", PRODUCTS)
    register_and_deploy(store, "shop", "m1", ModelType.CUSTOMERS_ALSO_VIEW)
    register_and_deploy(store, "shop", "idle", ModelType.CUSTOMERS_ALSO_VIEW, deploy=False)
    containers = ContainerStore(Tenants(store).scope("shop"))
    slot = {"slotConfigId": "main", "modelId": "m1", "itemCount": 4}
    containers.create("c1", ContainerBody.model_validate({"slotConfigurations": [slot]}))
    idle = {"slotConfigId": "main", "modelId": "idle", "itemCount": 4}
    containers.create("idle", ContainerBody.model_validate({"slotConfigurations": [idle]}))
    return "shop"


@pytest.fixture
def client(settings: Settings, shop: str) -> Iterator[TestClient]:
    model = CooccurrenceRecommender(SESSIONS)
    app = create_app(settings, models=RegistryModelSource(lambda scope, record: model))
    with TestClient(app) as c:
        yield c
