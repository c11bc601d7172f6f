"""Bulk entries (an import's upserts as columns, aisle.catalog.bulk): the same products, times and
inventories as the upserts applied one by one, on top of a version or of writes since it; written
before their entry, read back with it, stale rows left out, and their files pruned with the log."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from tests.support.product_shop import TENANT, attributes, shop

from aisle.catalog.bulk import ROOT, Bulk
from aisle.catalog.changes import ChangeLog, Entry, Head, Op, upserts
from aisle.catalog.compaction import compact
from aisle.catalog.products import now_micros
from aisle.catalog.state import CatalogState
from aisle.catalog.store import CatalogStore
from aisle.catalog.writer import CatalogWriter
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants

T = TENANT


@pytest.fixture
def tenants(blob_store: BlobStore, tmp_path: Path) -> Tenants:
    return shop(blob_store, tmp_path)


def _at(minutes: int) -> str:
    """A time ``minutes`` from now, RFC 3339 (after the shop's import, within the day writes allow)."""
    return (datetime.now(UTC) + timedelta(minutes=minutes)).isoformat()


def _state(tenants: Tenants) -> CatalogState:
    """The tenant's state as a process that starts now reads it (version, then the log's tail)."""
    scope = tenants.scope(T)
    state = CatalogState.load(scope, CatalogStore(scope).pointer())
    for entry in ChangeLog(scope).after(state.seq):
        state.apply(entry)
    return state


def _bulk(time: int) -> Bulk:
    """Upserts of an existing product patched since (1), a deleted one (2), one with a store's
    inventory (3), a new one (9); some fields null. Every attribute is a column, as an import maps it."""
    frame = pl.DataFrame(
        {
            "id": ["3", "9", "1", "2"],
            "title": ["Green Cap v2", "Wool Scarf", "Red Shoe v2", "Blue Shirt v2"],
            "brand": ["Puma", None, "Nike", "Puma"],
            "price": [10.0, 15.5, 50.0, 21.0],
            "stock": [5, 1, None, 2],
            "active": [True, None, False, None],
        },
        schema={
            "id": pl.Utf8,
            "title": pl.Utf8,
            "brand": pl.Utf8,
            "price": pl.Float64,
            "stock": pl.Int64,
            "active": pl.Boolean,
        },
    )
    return Bulk(frame, time)


def _set(fields: dict[str, Any] | None) -> dict[str, Any] | None:
    """The fields that hold a value (a product read from a version lists its empty columns too)."""
    return None if fields is None else {k: v for k, v in fields.items() if v is not None}


@pytest.mark.parametrize("compacted", [False, True], ids=["on-writes-since-the-version", "on-a-version"])
def test_a_bulk_applies_as_its_upserts_one_by_one(tenants: Tenants, compacted: bool) -> None:
    writer = CatalogWriter(tenants)
    writer.patch(T, "1", {"price": 45})
    writer.delete(T, "2")
    writer.inventory(T, "3", "s1", {"availability": "IN_STOCK", "quantity": 4})
    writer.upsert(T, "4", {"title": "Yellow Sock"})
    if compacted:
        assert compact(tenants, T) is not None
    columns, one_by_one = _state(tenants), _state(tenants)
    bulk = _bulk(now_micros())
    columns.apply(Entry(columns.seq + 1, [], bulk))
    one_by_one.apply(Entry(one_by_one.seq + 1, upserts(bulk)))

    config = attributes()
    # the same rows; a bulk's new products come before products created one by one since the version
    assert columns.products_frame(config).sort("id").equals(one_by_one.products_frame(config).sort("id"))
    assert orjson.loads(columns.times_file()) == orjson.loads(one_by_one.times_file())
    for pid in ("1", "2", "3", "4", "9", "never"):
        assert _set(columns.product(pid)) == _set(one_by_one.product(pid))
        assert columns.times_of(pid) == one_by_one.times_of(pid)
    assert columns.product("3")["inventories"]["s1"]["quantity"] == 4  # an upsert keeps the stores
    scarf = columns.product("9")
    assert scarf is not None and (scarf["title"], scarf["brand"]) == ("Wool Scarf", None)
    order = columns.products_frame(config)["id"].to_list()
    assert order == (["1", "3", "4", "9", "2"] if compacted else ["1", "2", "3", "9", "4"])


def test_an_import_is_one_entry_with_its_file_read_back_and_pruned_with_the_log(tenants: Tenants) -> None:
    scope = tenants.scope(T)
    writer = CatalogWriter(tenants)
    outcome = writer.import_data(T, b"sku,name,cost\n1,Red Shoe v2,45\n5,Belt,12\n", "csv")
    assert (outcome.applied, outcome.stale, outcome.sequence) == (2, 0, 1)
    entry = ChangeLog(scope).read(1)
    assert entry is not None and entry.bulk is not None and entry.ops == [] and len(entry) == 2
    assert [(op.op, op.id, op.fields["title"]) for op in entry.operations] == [
        ("upsert", "1", "Red Shoe v2"),
        ("upsert", "5", "Belt"),
    ]
    assert len(list(scope.list(f"{ROOT}/"))) == 1
    assert CatalogWriter(tenants).product(T, "5").fields["price"] == 12.0  # another process reads it

    writer.patch(T, "5", {"price": 13})
    # what a follower that leaves the applying to a child reads: numbers and bulk sizes only
    assert ChangeLog(scope).heads(0) == [Head(1, 2), Head(2, 0)] and ChangeLog(scope).heads(2) == []
    assert compact(tenants, T) is not None  # includes 1-2
    assert compact(tenants, T) is None
    writer.patch(T, "5", {"price": 14})
    assert compact(tenants, T) is not None  # prunes what the previous version included: 1-2
    assert ChangeLog(scope).sequence() == [3] and list(scope.list(f"{ROOT}/")) == []
    assert CatalogWriter(tenants).product(T, "1").fields["title"] == "Red Shoe v2"


def test_rows_older_than_the_stored_product_are_stale_and_the_rest_apply(tenants: Tenants) -> None:
    writer = CatalogWriter(tenants)
    writer.patch(T, "2", {"price": 30, "updateTime": _at(60)})
    data = b"sku,name\n1,Old One\n2,Old Two\n6,New Six\n"
    outcome = writer.import_data(T, data, "csv", update_time=_at(30))
    assert (outcome.applied, outcome.stale) == (2, 1)
    assert writer.product(T, "2").fields["title"] == "Blue Shirt"  # the later patch's product kept
    assert writer.product(T, "6").fields["title"] == "New Six"
    again = writer.import_data(T, b"sku,name\n2,Old Two\n", "csv", update_time=_at(30))
    assert (again.applied, again.stale, again.sequence) == (0, 1, outcome.sequence)  # nothing logged


def test_a_bulk_whose_number_was_taken_leaves_no_file(tenants: Tenants) -> None:
    scope = tenants.scope(T)
    log = ChangeLog(scope)
    assert log.create(1, [Op("delete", "3", now_micros())])
    assert not log.create(1, [], _bulk(now_micros()))
    assert list(scope.list(f"{ROOT}/")) == []
    assert log.create(2, [], _bulk(now_micros()))
    scope.delete(next(iter(scope.list(f"{ROOT}/"))))  # pruned between the entry's read and its file's
    assert log.read(2) is None
