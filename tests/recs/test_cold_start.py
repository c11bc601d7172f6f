"""Similar items of a product written after the SIMILAR_ITEMS model was trained: from its vectors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from tests.recs.test_serving import ids
from tests.support.recs import register_and_deploy, write_tenant

from aisle.catalog.changes import ChangeLog, Op
from aisle.catalog.store import CatalogStore
from aisle.core.events import open_event_store_url
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.recs.containers import ContainerBody, ContainerStore
from aisle.recs.models.base import ModelType
from aisle.recs.models.similar import train_similar_items
from aisle.recs.serving import (
    PredictAction,
    PredictEngine,
    PredictParams,
    PredictQuery,
    RegistryModelSource,
    VectorNeighbours,
)
from aisle.vectors.published import publish_table
from aisle.vectors.store import VectorStore
from aisle.vectors.table import table_dir, write_table

T = "shop"
N = 6
PRODUCTS = pl.DataFrame(
    {
        "id": [f"p{i}" for i in range(N)],
        "title": [f"Product {i}" for i in range(N)],
        "category": ["shoes", "shoes", "hats", "hats", "bags", "bags"],
    }
)


def unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


VECTORS = np.stack([unit(np.eye(8)[i] + 0.05) for i in range(N)])
NEW = unit(VECTORS[2] + 0.4 * VECTORS[3])  # the new product: nearest p2, then p3


@pytest.fixture
def engine(blob_store: BlobStore, tmp_path: Path) -> PredictEngine:
    write_tenant(blob_store, T, PRODUCTS)
    scope = Tenants(blob_store).scope(T)
    version = CatalogStore(scope).current_version()
    assert version is not None
    path = table_dir(tmp_path / "builder", T, "text", version, "r")
    write_table(path, version, PRODUCTS["id"].to_list(), VECTORS, np.zeros(N))
    publish_table(scope, "text", path)
    register_and_deploy(blob_store, T, "sim", ModelType.SIMILAR_ITEMS)
    ContainerStore(scope).create("similar", ContainerBody.model_validate({
        "slotConfigurations": [{"slotConfigId": "main", "modelId": "sim", "itemCount": 3}]}))  # fmt: skip
    model = train_similar_items(PRODUCTS, VECTORS)
    events = open_event_store_url(f"sqlite://{tmp_path / 'events.sqlite3'}")
    vectors = VectorNeighbours(VectorStore(tmp_path / "predict", check_every=0, bucket=blob_store))
    return PredictEngine(
        Tenants(blob_store), events, RegistryModelSource(lambda scope, record: model), vectors=vectors
    )


def similar(engine: PredictEngine, seed: str, **kw: object) -> list[str]:
    params = PredictParams(strict_filtering=True)
    return ids(engine.predict(T, PredictQuery("similar", [seed], params=params, **kw)))  # type: ignore[arg-type]


def write_new_product(blob_store: BlobStore, tmp_path: Path, engine: PredictEngine) -> None:
    """The product API's write, then the vector service's embedding of it (its own process and data dir)."""
    scope = Tenants(blob_store).scope(T)
    log = ChangeLog(scope)
    assert log.create(log.head() + 1, [Op("upsert", "n1", 1, {"title": "New", "category": "hats"})])
    embedder = VectorStore(tmp_path / "embedder", check_every=0, bucket=blob_store)
    assert embedder.upsert(T, ["n1"], NEW[None, :]) == 1
    engine.tenant_cache.table(*engine.tenant_cache.get(T))
    engine.tenant_cache.follow(T)


def test_a_new_product_gets_similar_items_from_its_vectors(
    engine: PredictEngine, blob_store: BlobStore, tmp_path: Path
) -> None:
    assert similar(engine, "n1") == []  # unknown to the model, to the catalog and to the vectors
    known = similar(engine, "p2")
    write_new_product(blob_store, tmp_path, engine)
    found = similar(engine, "n1")
    assert found[:2] == ["p2", "p3"] and len(found) == 3 and "n1" not in found
    assert similar(engine, "p2") == known  # a seed the model knows is still the model's
    shoes = PredictAction.model_validate(
        {"type": "FILTER", "condition": {"op": "eq", "field": "category", "value": "shoes"}}
    )
    assert sorted(similar(engine, "n1", actions=[shoes])) == ["p0", "p1"]  # the request's filter applies
    log = ChangeLog(Tenants(blob_store).scope(T))
    assert log.create(log.head() + 1, [Op("delete", "p2", 1)])
    engine.tenant_cache.follow(T)
    after = similar(engine, "n1")
    assert after[0] == "p3" and "p2" not in after and len(after) == 3  # a deleted product is not one


def test_without_vectors_a_new_product_gets_the_backfill(blob_store: BlobStore, tmp_path: Path) -> None:
    write_tenant(blob_store, T, PRODUCTS)
    register_and_deploy(blob_store, T, "sim", ModelType.SIMILAR_ITEMS)
    ContainerStore(Tenants(blob_store).scope(T)).create("similar", ContainerBody.model_validate({
        "slotConfigurations": [{"slotConfigId": "main", "modelId": "sim", "itemCount": 3}]}))  # fmt: skip
    model = train_similar_items(PRODUCTS, VECTORS)
    events = open_event_store_url(f"sqlite://{tmp_path / 'events.sqlite3'}")
    vectors = VectorNeighbours(VectorStore(tmp_path / "predict", check_every=0, bucket=blob_store))
    engine = PredictEngine(
        Tenants(blob_store), events, RegistryModelSource(lambda scope, record: model), vectors=vectors
    )
    log = ChangeLog(Tenants(blob_store).scope(T))
    assert log.create(1, [Op("upsert", "n1", 1, {"title": "New", "category": "hats"})])
    # no text table: the seed's category fills the list, as for any seed the model does not know
    assert ids(engine.predict(T, PredictQuery("similar", ["n1"]))) == ["p2", "p3"]
