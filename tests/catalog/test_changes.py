"""The catalog change log: numbered entries from concurrent writers, ordering by update time, merge
patches, batches that fail an operation alone, nothing acknowledged when the bucket fails, and
compaction into a catalog version that a restarted process reads with the log's tail."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tests.support.faults import S3Server
from tests.support.product_shop import TENANT, shop

from aisle.catalog.changes import ChangeLog
from aisle.catalog.compaction import Compactor, Lease, compact
from aisle.catalog.products import ProductInvalid
from aisle.catalog.store import KEEP_VERSIONS, CatalogStore
from aisle.catalog.writer import CatalogWriter
from aisle.core.errors import AisleError, BadRequest, NotFound, StorageUnavailable
from aisle.core.storage import BlobStore
from aisle.core.storage.resolver import open_blob_store_from_settings
from aisle.core.tenancy import Tenants

T = TENANT


def _at(minutes: int) -> str:
    """A time ``minutes`` from now, RFC 3339 (after the import that wrote the catalog, within a day)."""
    return (datetime.now(UTC) + timedelta(minutes=minutes)).isoformat()


PAST = "2000-01-01T00:00:00Z"
EARLY, MID, LATE, LATER = _at(10), _at(20), _at(30).replace("+00:00", "Z"), _at(40)


@pytest.fixture
def tenants(blob_store: BlobStore, tmp_path: Path) -> Tenants:
    return shop(blob_store, tmp_path)


def test_concurrent_writers_get_distinct_dense_sequence_numbers(
    any_blob_store: BlobStore, tmp_path: Path
) -> None:
    tenants = shop(any_blob_store, tmp_path)
    writers = [
        CatalogWriter(tenants),
        CatalogWriter(tenants),
    ]  # two processes: neither sees the other's state
    got: list[int] = []
    lock = threading.Lock()

    def write(writer: CatalogWriter, who: int) -> None:
        for i in range(6):
            seq = writer.upsert(T, f"w{who}-{i}", {"title": f"writer {who} product {i}"}).sequence
            with lock:
                got.append(seq)

    threads = [threading.Thread(target=write, args=(w, i)) for i, w in enumerate(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(got) == list(range(1, 13))  # distinct, and no number skipped
    assert ChangeLog(tenants.scope(T)).sequence() == list(range(1, 13))
    fresh = CatalogWriter(tenants)
    assert fresh.sequence(T) == 12
    assert all(fresh.product(T, f"w{w}-{i}").fields["title"] for w in (0, 1) for i in range(6))


def test_a_write_older_than_the_stored_one_is_stale_field_by_field(tenants: Tenants) -> None:
    writer = CatalogWriter(tenants)
    writer.patch(T, "1", {"price": 39.0, "updateTime": MID})
    older = writer.patch(T, "1", {"price": 10.0, "title": "Old title wins", "updateTime": EARLY})
    result = older.results[0]
    assert result.status == "applied" and result.stale_fields == ["price"]
    product = writer.product(T, "1")
    assert product.fields["price"] == 39.0 and product.fields["title"] == "Old title wins"

    only_stale = writer.patch(T, "1", {"price": 5.0, "updateTime": EARLY})
    assert only_stale.results[0].status == "stale" and only_stale.sequence == older.sequence  # nothing logged
    assert writer.upsert(T, "1", {"title": "Replaced", "updateTime": EARLY}).results[0].status == "stale"
    assert writer.delete(T, "1", EARLY).results[0].status == "stale"
    assert writer.product(T, "1").fields["price"] == 39.0

    assert writer.delete(T, "1", LATE).results[0].status == "applied"
    assert writer.upsert(T, "1", {"title": "Back", "updateTime": MID}).results[0].status == "stale"
    with pytest.raises(NotFound):
        writer.product(T, "1")  # the later delete holds
    assert writer.upsert(T, "1", {"title": "Back", "updateTime": LATER}).results[0].status == "applied"
    assert writer.product(T, "1").fields["title"] == "Back"


def test_a_merge_patch_changes_only_its_fields_and_null_removes_one(tenants: Tenants) -> None:
    writer = CatalogWriter(tenants)
    before = writer.product(T, "2")
    assert before.fields == {
        "title": "Blue Shirt",
        "brand": "Puma",
        "price": 20.0,
        "stock": 0,
        "active": False,
    }
    after = writer.patch(T, "2", {"price": "18.5", "brand": None, "stock": 4})
    product = writer.product(T, "2")
    assert product.fields == {
        "title": "Blue Shirt",
        "brand": None,
        "price": 18.5,
        "stock": 4,
        "active": False,
    }
    assert product.sequence == after.sequence == 1
    assert set(product.times) == {"_doc", "price", "brand", "stock"}
    with pytest.raises(NotFound):
        writer.patch(T, "nope", {"price": 1})


def test_an_invalid_field_is_named_and_nothing_is_written(tenants: Tenants) -> None:
    writer = CatalogWriter(tenants)
    for body, field in (
        ({"title": "x", "price": "cheap"}, "price"),
        ({"price": -1}, "price"),
        ({"stock": 1.5}, "stock"),
        ({"active": "maybe"}, "active"),
        ({"title": "x", "updateTime": "yesterday"}, "updateTime"),
        ({"title": "x", "updateTime": "2026-01-01T00:00:00"}, "updateTime"),
        ({"id": "other"}, "id"),
    ):
        with pytest.raises(ProductInvalid) as caught:
            writer.upsert(T, "9", body)
        status = 400 if field == "updateTime" else 422  # a rule the OpenAPI schema cannot state: 400
        assert caught.value.status == status and caught.value.details == {"field": field}, body
    assert ChangeLog(tenants.scope(T)).head() == 0
    ignored = writer.upsert(T, "9", {"title": "New", "colour": "red"}).results[0]
    assert ignored.status == "applied" and ignored.ignored_fields == ["colour"]


def test_a_batch_fails_a_bad_operation_alone(tenants: Tenants) -> None:
    writer = CatalogWriter(tenants)
    outcome = writer.batch(
        T,
        [
            {"op": "upsert", "id": "4", "product": {"title": "Yellow Sock", "price": 3}},
            {"op": "upsert", "id": "5", "product": {"title": "Bad", "price": "free"}},
            {"op": "patch", "id": "4", "product": {"price": 2.5}},
            {"op": "patch", "id": "missing", "product": {"price": 1}},
            {"op": "delete", "id": "3"},
        ],
    )
    assert [r.status for r in outcome.results] == ["applied", "failed", "applied", "failed", "applied"]
    assert outcome.results[1].error is not None and outcome.results[1].error.details == {"field": "price"}
    assert outcome.results[3].error is not None and outcome.results[3].error.code == "product_not_found"
    assert outcome.sequence == 1  # one write, one entry
    assert writer.product(T, "4").fields["price"] == 2.5
    with pytest.raises(NotFound):
        writer.product(T, "3")
    with pytest.raises(AisleError) as caught:
        writer.batch(T, [{"op": "delete", "id": "1"}] * 10_001)
    assert caught.value.status == 413 and ChangeLog(tenants.scope(T)).head() == 1


def test_imports_go_through_the_log_and_full_reconciliation_deletes_what_the_file_lacks(
    tenants: Tenants,
) -> None:
    writer = CatalogWriter(tenants)
    data = b'{"sku": "1", "name": "Red Shoe v2", "cost": 45}\n{"sku": "7", "name": "Hat", "cost": "x"}\n{}\n'
    incremental = writer.import_data(T, data, "jsonl")
    assert (incremental.applied, incremental.deleted, incremental.sequence) == (1, 0, 1)
    reasons = [(b.line, b.reason) for b in incremental.bad_rows]
    assert reasons == [(2, "field 'price' is not a number"), (3, "missing id")]
    with pytest.raises(BadRequest) as caught:  # a line of an empty object is a row without an id
        writer.import_data(T, b"{}\n", "jsonl")
    assert caught.value.code == "catalog_id_missing"
    assert writer.product(T, "1").fields["title"] == "Red Shoe v2" and writer.product(T, "2")

    full = writer.import_data(T, b"sku,name\n1,Red Shoe v3\n8,Scarf\n", "csv", reconciliation="full")
    assert (full.applied, full.deleted, full.sequence) == (2, 2, 2)
    assert writer.product(T, "8").fields["title"] == "Scarf"
    for gone in ("2", "3"):
        with pytest.raises(NotFound):
            writer.product(T, gone)


def test_compaction_folds_the_log_into_a_version_a_restarted_process_reads_with_the_tail(
    tenants: Tenants,
) -> None:
    scope = tenants.scope(T)
    writer = CatalogWriter(tenants)
    writer.patch(T, "1", {"title": "Red Trail Shoe", "updateTime": MID})
    writer.upsert(T, "4", {"title": "Yellow Sock"})
    writer.delete(T, "2")
    assert compact(tenants, T) is not None
    pointer = CatalogStore(scope).pointer()
    assert pointer is not None and pointer.sequence == 3
    products = {r["id"]: r for r in CatalogStore(scope).load().products.to_dicts()}
    assert list(products) == ["1", "3", "4"]  # catalog order kept, new products last
    assert products["1"]["title"] == "Red Trail Shoe" and products["1"]["price"] == 49.5
    assert compact(tenants, T) is None  # nothing new

    writer.patch(T, "3", {"price": 8})  # the tail after the version
    restarted = CatalogWriter(tenants)
    assert restarted.sequence(T) == 4 and restarted.product(T, "3").fields["price"] == 8.0
    assert restarted.patch(T, "1", {"title": "Older", "updateTime": EARLY}).results[0].status == "stale"
    assert restarted.upsert(T, "2", {"title": "Back", "updateTime": PAST}).results[0].status == "stale"

    assert compact(tenants, T) is not None
    assert ChangeLog(scope).sequence() == [4]  # what the previous version included is pruned
    follower = CatalogWriter(tenants)
    assert follower.product(T, "3").fields["price"] == 8.0 and follower.sequence(T) == 4


def test_compaction_keeps_the_newest_versions_and_deletes_older_ones(tenants: Tenants) -> None:
    store, writer = CatalogStore(tenants.scope(T)), CatalogWriter(tenants)
    first = store.current_version()
    made = []
    for price in range(6):
        writer.patch(T, "3", {"price": price + 1})
        folded = compact(tenants, T)
        assert folded is not None
        made.append(folded.version)
    kept = sorted(v.strip("/") for v in store.scope.list_dirs("catalog/"))
    assert kept == sorted(made[-KEEP_VERSIONS:]) and first not in kept
    assert store.current_version() == made[-1]
    assert CatalogWriter(tenants).product(T, "3").fields["price"] == 6.0


def test_one_compactor_at_a_time_and_the_background_one_folds_new_writes(tenants: Tenants) -> None:
    writer = CatalogWriter(tenants)
    writer.upsert(T, "4", {"title": "Yellow Sock"})
    lease = Lease(tenants.scope(T), "another process")
    held = lease.acquire()
    assert held is not None
    with pytest.raises(AisleError) as caught:
        compact(tenants, T)
    assert caught.value.status == 409 and caught.value.code == "catalog_compacting"
    lease.release(held)

    compactor = Compactor(tenants, every=3600)
    writer.on_write = compactor.wake
    writer.upsert(T, "5", {"title": "Green Sock"})
    assert [c.sequence for c in compactor.run_once()] == [2]
    assert compactor.run_once() == []


def test_nothing_is_acknowledged_while_the_bucket_fails(s3: S3Server, tmp_path: Path) -> None:
    settings = s3.settings(tmp_path / "data")
    tenants = shop(open_blob_store_from_settings(settings), tmp_path)
    writer = CatalogWriter(tenants)
    writer.patch(T, "1", {"price": 30})
    s3.stop()
    with pytest.raises(StorageUnavailable) as caught:
        writer.patch(T, "1", {"price": 1})
    assert caught.value.status == 503 and caught.value.headers and "Retry-After" in caught.value.headers
    s3.start()
    assert ChangeLog(tenants.scope(T)).sequence() == [1]
    assert CatalogWriter(tenants).product(T, "1").fields["price"] == 30.0
