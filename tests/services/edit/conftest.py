"""A small real tenant behind the edit service, with a co-occurrence model loader that counts loads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from fastapi.testclient import TestClient
from tests.support.recs import CooccurrenceRecommender, register_and_deploy, write_tenant

from aisle.core.config import Settings
from aisle.core.storage import BlobStore, open_blob_store
from aisle.recs.models.base import ModelType, Recommender
from aisle.recs.registry import ModelRecord
from aisle.services.edit.app import create_app

PRODUCTS = pl.DataFrame(
    {
        "id": [f"p{i}" for i in range(8)],
        "title": [f"Product {i}" for i in range(8)],
        "brand": ["nike", "puma"] * 4,
        "category": ["shoes"] * 4 + ["bags"] * 4,
    }
)
SESSIONS = [["p0", "p1"], ["p0", "p1"], ["p0", "p2"], ["p1", "p3"]]


class CountingLoader:
    """Loads a co-occurrence model, counting calls; a model id starting with ``broken`` fails."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, scope: BlobStore, record: ModelRecord) -> Recommender:
        self.calls.append(record.model_id)
        if record.model_id.startswith("broken"):
            raise RuntimeError("artifact is corrupt")
        return CooccurrenceRecommender(SESSIONS)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(auth="off", storage_url=f"file://{tmp_path / 'bucket'}", data_dir=tmp_path / "data")


@pytest.fixture
def store(settings: Settings) -> BlobStore:
    store = open_blob_store(settings.storage_url)
    write_tenant(store, "shop", PRODUCTS, event_types=["view", "cart", "purchase"])
    register_and_deploy(store, "shop", "live", ModelType.CUSTOMERS_ALSO_VIEW)
    register_and_deploy(store, "shop", "fresh", ModelType.SIMILAR_ITEMS, deploy=False)
    register_and_deploy(store, "shop", "broken", ModelType.SIMILAR_ITEMS, deploy=False)
    return store


@pytest.fixture
def loader() -> CountingLoader:
    return CountingLoader()


@pytest.fixture
def client(settings: Settings, store: BlobStore, loader: CountingLoader) -> Iterator[TestClient]:
    with TestClient(create_app(settings, loader=loader, job_poll_s=0.05)) as c:
        yield c
