"""The predict engine's container cache on both storage backends: fewer reads, bounded staleness."""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from tests.support.recs import CooccurrenceRecommender, register_and_deploy, write_tenant

from aisle.core.events import open_event_store_url
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.recs.containers import ContainerBody, ContainerNotFound, ContainerStore
from aisle.recs.models.base import ModelType
from aisle.recs.serving import ContainerCache, ItemOut, PredictEngine, PredictQuery, RegistryModelSource

T = "shop"
PRODUCTS = pl.DataFrame({"id": [f"p{i}" for i in range(6)], "title": [f"Product {i}" for i in range(6)]})
SESSIONS = [["p0", "p1"]] * 4 + [["p0", "p2"]] * 3 + [["p0", "p3"]] * 2 + [["p0", "p4"]]


class CountingStore:
    """A real BlobStore that counts the reads touching container files.

    Every read of a container goes through ``get``/``exists`` (remote stores) or ``local_path`` (the
    local store hands out a file path and the reader opens it), so the count is the storage reads.
    """

    def __init__(self, inner: BlobStore) -> None:
        self.inner = inner
        self.container_reads = 0

    def _seen(self, path: str) -> None:
        if "/containers/" in f"/{path}/":
            self.container_reads += 1

    def get(self, path: str) -> bytes:
        self._seen(path)
        return self.inner.get(path)

    def put(self, path: str, data: bytes) -> None:
        self.inner.put(path, data)

    def put_if_absent(self, path: str, data: bytes) -> bool:
        return self.inner.put_if_absent(path, data)

    def exists(self, path: str) -> bool:
        self._seen(path)
        return self.inner.exists(path)

    def delete(self, path: str) -> None:
        self.inner.delete(path)

    def list(self, prefix: str = "") -> Iterator[str]:
        self._seen(prefix)
        return self.inner.list(prefix)

    def list_dirs(self, prefix: str = "") -> builtins.list[str]:
        self._seen(prefix)
        return self.inner.list_dirs(prefix)

    def local_path(self, path: str) -> str | None:
        self._seen(path)
        return self.inner.local_path(path)


class Clock:
    """Monotonic seconds that move only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def body(count: int) -> ContainerBody:
    return ContainerBody.model_validate(
        {"slotConfigurations": [{"slotConfigId": "main", "modelId": "m1", "itemCount": count}]}
    )


def ask(container_id: str = "c1") -> PredictQuery:
    return PredictQuery(container_id=container_id, seeds=["p0"])


@pytest.fixture
def writer(any_blob_store: BlobStore) -> ContainerStore:
    """The edit side: a tenant with container ``c1`` (4 items), written straight to storage."""
    write_tenant(any_blob_store, T, PRODUCTS)
    register_and_deploy(any_blob_store, T, "m1", ModelType.CUSTOMERS_ALSO_VIEW)
    containers = ContainerStore(Tenants(any_blob_store).scope(T))
    containers.create("c1", body(4))
    return containers


@pytest.fixture
def counting(any_blob_store: BlobStore, writer: ContainerStore) -> CountingStore:
    return CountingStore(any_blob_store)


def engine_over(store: BlobStore, tmp_path: Path, ttl_s: float, clock: Clock) -> PredictEngine:
    model = CooccurrenceRecommender(SESSIONS)
    return PredictEngine(
        # the tenant configuration cached for an hour: its own 2 s of real time could pass between a
        # request and the next on a loaded machine (a cold S3 predict), and these tests are about the
        # container cache on the test's clock
        Tenants(store, ttl=3600),
        open_event_store_url(f"sqlite://{tmp_path / 'events.sqlite3'}"),
        RegistryModelSource(lambda scope, record: model),
        containers=ContainerCache(ttl_s, clock=clock),
    )


def test_repeated_predicts_within_the_ttl_read_the_container_once(
    counting: CountingStore, tmp_path: Path
) -> None:
    clock = Clock()
    engine = engine_over(counting, tmp_path, 2.0, clock)
    assert [i.id for i in engine.predict(T, ask())] == ["p1", "p2", "p3", "p4"]
    after_first = counting.container_reads
    assert after_first > 0
    for _ in range(5):
        clock.now += 0.25
        assert len(engine.predict(T, ask())) == 4
    assert counting.container_reads == after_first
    clock.now += 0.75  # 2 s after the first read: the entry is stale
    engine.predict(T, ask())
    assert counting.container_reads > after_first


def test_replaced_container_is_served_once_the_ttl_has_passed(
    counting: CountingStore, writer: ContainerStore, tmp_path: Path
) -> None:
    clock = Clock()
    engine = engine_over(counting, tmp_path, 2.0, clock)
    assert len(engine.predict(T, ask())) == 4
    writer.replace("c1", body(2), version=1)
    clock.now += 1.5
    assert len(engine.predict(T, ask())) == 4  # within the documented bound: still the old one
    clock.now += 0.5
    assert len(engine.predict(T, ask())) == 2
    writer.delete("c1")
    clock.now += 2.0
    with pytest.raises(ContainerNotFound):
        engine.predict(T, ask())


def test_ttl_zero_reads_the_container_on_every_request(
    counting: CountingStore, writer: ContainerStore, tmp_path: Path
) -> None:
    engine = engine_over(counting, tmp_path, 0.0, Clock())
    seen = []
    for _ in range(3):
        engine.predict(T, ask())
        seen.append(counting.container_reads)
    assert seen[0] < seen[1] < seen[2]
    writer.replace("c1", body(2), version=1)
    assert len(engine.predict(T, ask())) == 2  # the clock did not move
    writer.delete("c1")
    with pytest.raises(ContainerNotFound):
        engine.predict(T, ask())


@pytest.mark.parametrize("ttl_s", [0.0, 2.0])
def test_missing_container_keeps_its_error(
    counting: CountingStore, writer: ContainerStore, tmp_path: Path, ttl_s: float
) -> None:
    with pytest.raises(ContainerNotFound) as uncached:
        writer.get("nope")
    engine = engine_over(counting, tmp_path, ttl_s, Clock())
    for _ in range(2):  # the second answer comes from the negative entry when the cache is on
        with pytest.raises(ContainerNotFound) as err:
            engine.predict(T, ask("nope"))
        assert (err.value.status, err.value.to_dict()) == (404, uncached.value.to_dict())
        assert err.value.code == "container_not_found"


def test_a_missing_id_is_read_once_per_ttl_and_its_creation_is_seen_after_it(
    counting: CountingStore, writer: ContainerStore, tmp_path: Path
) -> None:
    clock = Clock()
    engine = engine_over(counting, tmp_path, 2.0, clock)
    with pytest.raises(ContainerNotFound):
        engine.predict(T, ask("late"))
    after_first = counting.container_reads
    for _ in range(20):
        with pytest.raises(ContainerNotFound):
            engine.predict(T, ask("late"))
    assert counting.container_reads == after_first
    writer.create("late", body(3))
    clock.now += 1.5
    with pytest.raises(ContainerNotFound):
        engine.predict(T, ask("late"))
    clock.now += 0.5
    assert len(engine.predict(T, ask("late"))) == 3


def test_readiness_answers_inline_from_a_fresh_entry_and_defers_a_missing_or_stale_one(
    blob_store: BlobStore, tmp_path: Path
) -> None:
    write_tenant(blob_store, T, PRODUCTS)
    register_and_deploy(blob_store, T, "m1", ModelType.CUSTOMERS_ALSO_VIEW)
    writer = ContainerStore(Tenants(blob_store).scope(T))
    writer.create("c1", body(4))
    writer.create("c2", body(2))
    counting = CountingStore(blob_store)
    clock = Clock()
    engine = engine_over(counting, tmp_path, 2.0, clock)
    engine.predict(T, ask())  # loads configuration, catalog, model and c1
    assert len(_inline(engine, ask())) == 4
    reads = counting.container_reads
    assert engine.readiness(T, ask("c2")).waits  # never read inline: the thread pool reads it
    assert counting.container_reads == reads  # ...and nothing was read inline
    assert len(engine.predict(T, ask("c2"))) == 2
    assert len(_inline(engine, ask("c2"))) == 2
    clock.now += 2.0
    assert engine.readiness(T, ask()).waits  # a stale entry
    with pytest.raises(ContainerNotFound):
        engine.predict(T, ask("nope"))
    with pytest.raises(ContainerNotFound):  # a fresh miss is answered inline too
        engine.readiness(T, ask("nope"))


def _inline(engine: PredictEngine, q: PredictQuery) -> list[ItemOut]:
    """The items of ``q`` answered as the predict service answers a request that waits for nothing:
    :meth:`PredictEngine.readiness` found everything in the caches, and only ranking is left."""
    ready = engine.readiness(T, q)
    assert not ready.waits and ready.found is not None and ready.found.query is q
    return engine.recommend(T, q, ready=ready).items


def test_with_the_cache_off_warm_requests_still_read_inline(blob_store: BlobStore, tmp_path: Path) -> None:
    write_tenant(blob_store, T, PRODUCTS)
    register_and_deploy(blob_store, T, "m1", ModelType.CUSTOMERS_ALSO_VIEW)
    ContainerStore(Tenants(blob_store).scope(T)).create("c1", body(4))
    counting = CountingStore(blob_store)
    engine = engine_over(counting, tmp_path, 0.0, Clock())
    engine.predict(T, ask())
    reads = counting.container_reads
    assert len(_inline(engine, ask())) == 4  # nothing waits: a local read, as before
    assert counting.container_reads > reads


def test_the_cache_keeps_at_most_max_entries(counting: CountingStore, writer: ContainerStore) -> None:
    for cid in ("c2", "c3"):
        writer.create(cid, body(1))
    store = ContainerStore(Tenants(counting).scope(T))
    cache = ContainerCache(2.0, max_entries=2, clock=Clock())
    for cid in ("c1", "c2", "c3"):
        cache.get(T, store, cid)
    reads = counting.container_reads
    cache.get(T, store, "c3")
    cache.get(T, store, "c2")
    assert counting.container_reads == reads  # the two most recent are kept
    cache.get(T, store, "c1")
    assert counting.container_reads > reads  # the oldest was dropped


def test_entries_are_per_tenant(any_blob_store: BlobStore, tmp_path: Path) -> None:
    for tenant, count in (("a", 1), ("b", 3)):
        write_tenant(any_blob_store, tenant, PRODUCTS)
        register_and_deploy(any_blob_store, tenant, "m1", ModelType.CUSTOMERS_ALSO_VIEW)
        ContainerStore(Tenants(any_blob_store).scope(tenant)).create("c1", body(count))
    engine = engine_over(any_blob_store, tmp_path, 2.0, Clock())
    assert [len(engine.predict(t, ask())) for t in ("a", "b", "a")] == [1, 3, 1]


class NoReadStore(CountingStore):
    """Counts every storage access (not only container files) once ``watch`` is set."""

    watch = False
    accesses = 0

    def _seen(self, path: str) -> None:
        if self.watch:
            self.accesses += 1


def test_a_warm_predict_answers_inline_without_touching_storage_on_either_backend(
    writer: ContainerStore, any_blob_store: BlobStore, tmp_path: Path
) -> None:
    """Once a request has loaded what the container needs, later ones are answered inline from the
    caches, on S3 as on a local folder (before the container cache, S3 always went to a thread)."""
    store = NoReadStore(any_blob_store)
    engine = engine_over(store, tmp_path, 2.0, Clock())
    cold = [i.id for i in engine.predict(T, ask())]
    store.watch = True
    assert [i.id for i in _inline(engine, ask())] == cold
    assert store.accesses == 0
    assert engine.readiness(T, PredictQuery(container_id="c1", seeds=["p0"], visitor_id="v1")).waits


def test_with_the_cache_off_only_a_local_container_is_read_inline(
    writer: ContainerStore, any_blob_store: BlobStore, tmp_path: Path
) -> None:
    engine = engine_over(any_blob_store, tmp_path, 0.0, Clock())
    assert len(engine.predict(T, ask())) == 4
    if any_blob_store.local_path("") is not None:
        assert len(_inline(engine, ask())) == 4
    else:
        assert engine.readiness(T, ask()).waits  # a container on remote storage


def test_a_flood_of_missing_ids_does_not_push_out_a_real_container(
    counting: CountingStore, writer: ContainerStore
) -> None:
    store = ContainerStore(Tenants(counting).scope(T))
    cache = ContainerCache(2.0, max_entries=4, max_misses=3, clock=Clock())
    cache.get(T, store, "c1")
    for n in range(50):
        with pytest.raises(ContainerNotFound):
            cache.get(T, store, f"made-up-{n}")
    reads = counting.container_reads
    cache.get(T, store, "c1")
    assert counting.container_reads == reads  # still cached: the misses evicted only each other
    for n in (47, 48, 49):  # the three most recent misses are kept, the older ones were dropped
        with pytest.raises(ContainerNotFound):
            cache.get(T, store, f"made-up-{n}")
    assert counting.container_reads == reads
    with pytest.raises(ContainerNotFound):
        cache.get(T, store, "made-up-0")
    assert counting.container_reads > reads


def test_a_container_created_after_a_cached_miss_replaces_the_miss(
    counting: CountingStore, writer: ContainerStore
) -> None:
    clock = Clock()
    store = ContainerStore(Tenants(counting).scope(T))
    cache = ContainerCache(2.0, clock=clock)
    with pytest.raises(ContainerNotFound):
        cache.get(T, store, "later")
    writer.create("later", body(2))
    clock.now += 2.0
    assert cache.get(T, store, "later").slotConfigurations[0].itemCount == 2
    reads = counting.container_reads
    assert cache.get(T, store, "later").slotConfigurations[0].itemCount == 2
    assert counting.container_reads == reads
