"""Container store: versions, optimistic concurrency, tombstones, on real local object storage."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from aisle.core.storage import BlobStore, PrefixBlobStore
from aisle.recs.containers import (
    ContainerBody,
    ContainerExists,
    ContainerNotFound,
    ContainerStore,
    ContainerVersionConflict,
)


def body(model: str = "m1", count: int = 20) -> ContainerBody:
    return ContainerBody.model_validate(
        {"slotConfigurations": [{"slotConfigId": "s1", "modelId": model, "itemCount": count}]}
    )


@pytest.fixture
def store(blob_store: BlobStore) -> ContainerStore:
    return ContainerStore(PrefixBlobStore(blob_store, "shop"))


def test_create_get_replace_increments_version(store: ContainerStore) -> None:
    assert store.create("c1", body()).version == 1
    assert store.replace("c1", body("m2"), version=1).version == 2
    got = store.get("c1")
    assert got.version == 2 and got.slotConfigurations[0].modelId == "m2"
    assert [c.containerId for c in store.list()] == ["c1"]


def test_stale_version_is_refused_and_changes_nothing(store: ContainerStore) -> None:
    store.create("c1", body())
    store.replace("c1", body("m2"), version=1)
    with pytest.raises(ContainerVersionConflict) as err:
        store.replace("c1", body("m3"), version=1)
    assert err.value.status == 409 and err.value.details["currentVersion"] == 2
    assert store.get("c1").slotConfigurations[0].modelId == "m2"


def test_create_twice_is_409_and_delete_then_recreate_restarts_at_1(store: ContainerStore) -> None:
    store.create("c1", body())
    with pytest.raises(ContainerExists):
        store.create("c1", body())
    store.delete("c1")
    with pytest.raises(ContainerNotFound):
        store.get("c1")
    assert store.list() == []
    assert store.create("c1", body()).version == 1


def test_twenty_concurrent_writers_lose_no_update(store: ContainerStore) -> None:
    """Each writer reads the current version and replaces; every success is a distinct new version."""
    store.create("c1", body())

    def writer(n: int) -> int | None:
        for _ in range(50):  # retry on conflict, as a client would
            current = store.get("c1").version
            try:
                return store.replace("c1", body(f"m{n}"), version=current).version
            except ContainerVersionConflict:
                continue
        return None

    with ThreadPoolExecutor(20) as pool:
        versions = list(pool.map(writer, range(20)))
    assert None not in versions
    assert sorted(versions) == list(range(2, 22))  # type: ignore[type-var]
    assert store.get("c1").version == 21


def test_a_fresh_reader_sees_the_latest_even_when_the_hint_lags(blob_store: BlobStore) -> None:
    scope = PrefixBlobStore(blob_store, "shop")
    writer, reader = ContainerStore(scope), ContainerStore(scope)
    writer.create("c1", body())
    assert reader.get("c1").version == 1
    writer.replace("c1", body("m9"), version=1)
    scope.put("containers/c1/head.json", b'{"revision": 1}')  # simulate a lagging hint
    assert reader.get("c1").slotConfigurations[0].modelId == "m9"


def test_duplicate_slot_ids_are_invalid() -> None:
    with pytest.raises(ValueError, match="repeated: a"):
        ContainerBody.model_validate(
            {
                "slotConfigurations": [
                    {"slotConfigId": "a", "modelId": "m"},
                    {"slotConfigId": "a", "modelId": "n"},
                ]
            }
        )


def test_using_model(store: ContainerStore) -> None:
    store.create("c1", body("m1"))
    store.create("c2", body("m2"))
    assert store.using_model("m1") == ["c1"] and store.using_model("zz") == []
