"""Model registry: round trip, versioning, artifacts written before the record, errors."""

from __future__ import annotations

import polars as pl
import pytest

from aisle.core.errors import Conflict
from aisle.core.storage import BlobStore
from aisle.core.tenancy import tenant_scope
from aisle.recs.loading import load_recommender
from aisle.recs.models.base import ModelType, RecContext, Recommender
from aisle.recs.registry import ArtifactWriter, ModelNotFound, ModelRecord, ModelRegistry
from aisle.recs.training import save_model, train_also_view

VIEWS = pl.DataFrame(
    {
        "session_id": ["s1", "s1", "s2", "s2", "s3", "s3", "s4", "s4"],
        "item_id": ["a", "b", "a", "b", "a", "c", "d", "e"],
        "ts": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
    }
)


class RecordingStore:
    """A store that remembers the order of writes (to check artifact-before-record)."""

    def __init__(self, inner: BlobStore) -> None:
        self.inner = inner
        self.puts: list[str] = []

    def __getattr__(self, name: str):  # get, exists, list, ...
        return getattr(self.inner, name)

    def put(self, path: str, data: bytes) -> None:
        self.puts.append(path)
        self.inner.put(path, data)

    def put_if_absent(self, path: str, data: bytes) -> bool:
        self.puts.append(path)
        return self.inner.put_if_absent(path, data)


def test_register_get_list_round_trip_and_versions(blob_store: BlobStore) -> None:
    scope = tenant_scope(blob_store, "shop")
    first = save_model(scope, "shop", train_also_view(VIEWS), metrics={"hr@20": 0.5})
    second = save_model(scope, "shop", train_also_view(VIEWS))
    registry = ModelRegistry(scope)
    got = registry.get("customers-also-view")
    assert (first.version, second.version) == (1, 2)
    assert got == second and got.model_type is ModelType.CUSTOMERS_ALSO_VIEW and got.status == "trained"
    assert [r.model_id for r in registry.list()] == ["customers-also-view"]
    assert got.artifact_uri == "models/artifacts/customers-also-view/v2"
    # version 1 is still there, unchanged, for anyone serving it
    assert scope.exists("models/artifacts/customers-also-view/v1/model.npz")
    assert ModelRegistry(tenant_scope(blob_store, "other")).list() == []


def test_artifact_is_written_before_the_registry_entry(blob_store: BlobStore) -> None:
    store = RecordingStore(blob_store)
    save_model(tenant_scope(store, "shop"), "shop", train_also_view(VIEWS))  # type: ignore[arg-type]
    record_at = next(i for i, p in enumerate(store.puts) if p.startswith("shop/models/registry/"))
    artifacts = [i for i, p in enumerate(store.puts) if "/models/artifacts/" in p]
    assert artifacts and max(artifacts) < record_at == len(store.puts) - 1


def test_register_refuses_a_record_without_artifact_and_artifacts_are_immutable(
    blob_store: BlobStore,
) -> None:
    scope = tenant_scope(blob_store, "shop")
    record = ModelRecord(
        model_id="ghost",
        tenant="shop",
        model_type=ModelType.SIMILAR_ITEMS,
        artifact_uri="models/artifacts/ghost/v1",
    )
    with pytest.raises(Conflict):
        ModelRegistry(scope).register(record)
    writer = ArtifactWriter(scope, "ghost", 1)
    writer.put_json("params.json", {})
    with pytest.raises(Conflict):
        writer.put_json("params.json", {"changed": True})


def test_unknown_model_is_model_not_found(blob_store: BlobStore) -> None:
    with pytest.raises(ModelNotFound) as err:
        ModelRegistry(tenant_scope(blob_store, "shop")).get("nope")
    assert err.value.code == "model_not_found" and err.value.status == 404


def test_loaded_model_serves_like_the_trained_one(blob_store: BlobStore) -> None:
    scope = tenant_scope(blob_store, "shop")
    model = train_also_view(VIEWS)
    record = save_model(scope, "shop", model)
    loaded = load_recommender(scope, record)
    assert isinstance(loaded, Recommender)
    ctx = RecContext(seeds=["a"], k=5)
    assert loaded.recommend(ctx) == model.recommend(ctx)
    assert loaded.recommend(ctx)[0].item_id == "b"  # viewed with a twice, c once
