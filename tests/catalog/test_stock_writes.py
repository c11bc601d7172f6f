"""Stock in the catalog (issue 41): ``availability`` checked to its four values, per-store inventory
merged store by store by each store's own update time (Google Retail's ``addLocalInventories``), a
whole-product write that keeps the stored inventories, batches that fail an operation alone, and
compaction that keeps every store's entry and time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tests.support.product_shop import TENANT, shop

from aisle.catalog.compaction import compact
from aisle.catalog.products import ProductInvalid
from aisle.catalog.stock_fields import StockInvalid, check_inventories, inventories_of
from aisle.catalog.writer import CatalogWriter
from aisle.core.errors import NotFound
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants

T = TENANT


def _at(minutes: int) -> str:
    """A time ``minutes`` from now, RFC 3339 (after the import that wrote the catalog, within a day)."""
    return (datetime.now(UTC) + timedelta(minutes=minutes)).isoformat()


EARLY, MID, LATE = _at(10), _at(20), _at(30)


@pytest.fixture
def tenants(blob_store: BlobStore, tmp_path: Path) -> Tenants:
    return shop(blob_store, tmp_path)


def stock(body: str, quantity: int | None = None, at: str | None = None) -> dict[str, object]:
    return {"availability": body, "quantity": quantity} | ({"updateTime": at} if at else {})


def test_each_store_is_ordered_by_its_own_time_and_other_stores_are_untouched(tenants: Tenants) -> None:
    writer = CatalogWriter(tenants)
    assert writer.inventory(T, "1", "s1", stock("IN_STOCK", 3, MID)).results[0].status == "applied"
    assert writer.inventory(T, "1", "s2", stock("OUT_OF_STOCK", 0, EARLY)).results[0].status == "applied"
    late = writer.inventory(T, "1", "s1", stock("OUT_OF_STOCK", 0, EARLY)).results[0]
    assert (late.status, late.stale_fields) == ("stale", ["inventories/s1"])
    record = writer.product(T, "1")
    assert record.fields["inventories"] == {
        "s1": {"availability": "IN_STOCK", "quantity": 3},
        "s2": {"availability": "OUT_OF_STOCK", "quantity": 0},
    }
    assert record.fields["title"] == "Red Running Shoe" and record.fields["price"] == 49.5
    assert writer.inventory(T, "1", "s1", stock("BACKORDER", None, LATE)).results[0].status == "applied"
    assert writer.product(T, "1").fields["inventories"]["s1"] == {
        "availability": "BACKORDER",
        "quantity": None,
    }
    assert writer.stores(T) == ["s1", "s2"]


def test_a_whole_product_write_keeps_the_inventories_and_is_not_ordered_against_them(
    tenants: Tenants,
) -> None:
    writer = CatalogWriter(tenants)
    writer.inventory(T, "2", "s1", stock("IN_STOCK", 5, LATE))
    put = writer.upsert(T, "2", {"title": "Blue Shirt", "availability": "out_of_stock", "updateTime": MID})
    assert put.results[0].status == "applied"
    fields = writer.product(T, "2").fields
    assert fields["availability"] == "OUT_OF_STOCK" and fields["price"] is None
    assert fields["inventories"] == {"s1": {"availability": "IN_STOCK", "quantity": 5}}
    # an inventory given in a product write merges store by store, a stale store left out
    patch = writer.patch(
        T, "2", {"inventories": {"s1": stock("OUT_OF_STOCK", 0), "s2": stock("PREORDER")}, "updateTime": LATE}
    ).results[0]
    assert patch.status == "applied" and patch.stale_fields == []
    older = writer.patch(T, "2", {"inventories": {"s1": None, "s3": stock("IN_STOCK")}, "updateTime": MID})
    assert older.results[0].stale_fields == ["inventories/s1"]
    assert sorted(writer.product(T, "2").fields["inventories"]) == ["s1", "s2", "s3"]
    writer.patch(T, "2", {"inventories": {"s3": None}, "updateTime": LATE})
    assert sorted(writer.product(T, "2").fields["inventories"]) == ["s1", "s2"]


def test_bad_stock_values_are_named_and_nothing_is_written(tenants: Tenants) -> None:
    writer = CatalogWriter(tenants)
    cases = [
        (lambda: writer.patch(T, "1", {"availability": "SOLD_OUT"}), "availability"),
        (
            lambda: writer.upsert(T, "1", {"inventories": {"s1": {"quantity": 2}}}),
            "inventories.s1.availability",
        ),
        (lambda: writer.upsert(T, "1", {"inventories": {"s 1": stock("IN_STOCK")}}), "inventories.s 1"),
        (lambda: writer.upsert(T, "1", {"inventories": ["s1"]}), "inventories"),
        (lambda: writer.inventory(T, "1", "s1", stock("IN_STOCK", -1)), "quantity"),
        (lambda: writer.inventory(T, "1", "s1", {"availability": "IN_STOCK", "qty": 1}), "qty"),
        (lambda: writer.inventory(T, "1", "s/1", stock("IN_STOCK")), "storeId"),
        (lambda: writer.inventory(T, "1", "s1", {"quantity": 1}), "availability"),
    ]
    for call, field in cases:
        with pytest.raises(ProductInvalid) as caught:
            call()
        assert caught.value.code == "product_invalid" and caught.value.field == field, caught.value
    assert writer.sequence(T) == 0
    with pytest.raises(NotFound) as missing:
        writer.inventory(T, "404", "s1", stock("IN_STOCK"))
    assert missing.value.code == "product_not_found"


def test_an_inventory_batch_fails_a_bad_operation_alone(tenants: Tenants) -> None:
    writer = CatalogWriter(tenants)
    outcome = writer.inventory_batch(
        T,
        [
            {"id": "1", "storeId": "s1", "availability": "IN_STOCK", "quantity": 2},
            {"id": "404", "storeId": "s1", "availability": "IN_STOCK"},
            {"id": "2", "storeId": "s1", "availability": "GONE"},
            {"id": "3", "storeId": "s2", "availability": "OUT_OF_STOCK", "updateTime": "yesterday"},
            {"id": "3", "storeId": "s2", "availability": "PREORDER", "updateTime": MID},
            {"id": "3", "storeId": "s2", "availability": "OUT_OF_STOCK", "updateTime": EARLY},
        ],
    )
    statuses = [(r.status, r.error.code if r.error else None) for r in outcome.results]
    assert statuses == [
        ("applied", None),
        ("failed", "product_not_found"),
        ("failed", "product_invalid"),
        ("failed", "update_time_invalid"),
        ("applied", None),
        ("stale", None),
    ]
    assert outcome.sequence == 1
    assert writer.product(T, "3").fields["inventories"] == {
        "s2": {"availability": "PREORDER", "quantity": None}
    }


def test_compaction_keeps_every_store_and_its_time(tenants: Tenants) -> None:
    writer = CatalogWriter(tenants)
    writer.inventory(T, "1", "s1", stock("IN_STOCK", 3, MID))
    writer.patch(T, "3", {"availability": "OUT_OF_STOCK"})
    assert compact(tenants, T) is not None
    fresh = CatalogWriter(tenants)  # a restarted process reads the version
    assert fresh.product(T, "1").fields["inventories"] == {"s1": {"availability": "IN_STOCK", "quantity": 3}}
    assert fresh.product(T, "2").fields["inventories"] is None
    assert fresh.product(T, "3").fields["availability"] == "OUT_OF_STOCK"
    assert fresh.inventory(T, "1", "s1", stock("OUT_OF_STOCK", 0, EARLY)).results[0].status == "stale"
    assert fresh.stores(T) == ["s1"]


def test_stored_inventories_read_back_in_either_form() -> None:
    entry = {"availability": "IN_STOCK", "quantity": 1}
    assert inventories_of('{"s1": {"availability": "IN_STOCK", "quantity": 1}}') == {"s1": entry}
    assert inventories_of({"s1": entry}) == {"s1": entry}
    assert inventories_of(None) == {} and inventories_of("not json") == {}
    with pytest.raises(StockInvalid):
        check_inventories({"s1": {"availability": "IN_STOCK", "quantity": 1.5}})
