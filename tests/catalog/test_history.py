"""A product's change history from the catalog change log: its writes newest first with the fields they
set, pages, stale fields left out, and what the history covers once compaction has pruned the log."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tests.support.product_shop import TENANT, shop

from aisle.catalog.changes import ChangeLog
from aisle.catalog.compaction import compact
from aisle.catalog.history import ChangeHistory
from aisle.catalog.writer import CatalogWriter
from aisle.core.errors import TenantNotFound
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants

T = TENANT


def _at(minutes: int) -> str:
    return (datetime.now(UTC) + timedelta(minutes=minutes)).isoformat()


@pytest.fixture
def tenants(blob_store: BlobStore, tmp_path: Path) -> Tenants:
    return shop(blob_store, tmp_path)


def test_the_history_lists_each_write_of_the_product_newest_first(tenants: Tenants) -> None:
    writer, history = CatalogWriter(tenants), ChangeHistory(tenants)
    assert history.of(T, "1").total == 0  # imported as a whole file: nothing in the log yet
    writer.patch(T, "1", {"price": 39.0})
    writer.patch(T, "2", {"price": 5.0})  # another product: not in 1's history
    writer.upsert(T, "1", {"title": "Red Running Shoe II", "brand": "Nike", "price": 59.0})
    writer.batch(T, [{"op": "patch", "id": "1", "product": {"stock": 7}}, {"op": "delete", "id": "3"}])

    page = history.of(T, "1")
    assert page.total == 3 and page.head == 4
    assert [(c.seq, c.op) for c in page.changes] == [(4, "patch"), (3, "upsert"), (1, "patch")]
    assert page.changes[0].fields == {"stock": 7}
    assert page.changes[1].fields["title"] == "Red Running Shoe II"
    assert page.changes[2].fields == {"price": 39.0}
    assert all(c.at and c.time > 0 for c in page.changes)
    assert page.first_seq == 1 and page.since is not None
    deleted = history.of(T, "3").changes
    assert [(c.seq, c.op, c.fields) for c in deleted] == [(4, "delete", {})]


def test_a_patch_shows_only_the_fields_it_changed(tenants: Tenants) -> None:
    writer = CatalogWriter(tenants)
    writer.patch(T, "1", {"price": 39.0, "updateTime": _at(20)})
    writer.patch(T, "1", {"price": 10.0, "title": "Old title", "updateTime": _at(10)})  # price is stale
    newest = ChangeHistory(tenants).of(T, "1").changes[0]
    assert newest.fields == {"title": "Old title"}


def test_the_history_comes_in_pages(tenants: Tenants) -> None:
    writer, history = CatalogWriter(tenants), ChangeHistory(tenants)
    for i in range(5):
        writer.patch(T, "2", {"price": 10.0 + i})
    first, last = history.of(T, "2", limit=2), history.of(T, "2", offset=4, limit=2)
    assert first.total == last.total == 5
    assert [c.fields["price"] for c in first.changes] == [14.0, 13.0]
    assert [c.fields["price"] for c in last.changes] == [10.0]
    assert history.of(T, "2", offset=10).changes == []


def test_after_compaction_the_history_covers_the_entries_left_in_the_log(tenants: Tenants) -> None:
    writer, history = CatalogWriter(tenants), ChangeHistory(tenants)
    writer.patch(T, "1", {"price": 1.0})
    writer.patch(T, "1", {"price": 2.0})
    before = history.of(T, "1")
    assert before.total == 2 and before.first_seq == 1
    compact(tenants, T)  # folds 1-2; prunes what the previous version included (nothing)
    writer.patch(T, "1", {"price": 3.0})
    compact(tenants, T)  # folds 3; prunes 1-2
    assert ChangeLog(tenants.scope(T)).sequence() == [3]
    after = history.of(T, "1")  # the same reader: entries read before and pruned since are gone
    assert [c.fields["price"] for c in after.changes] == [3.0]
    assert after.first_seq == 3 and after.since == after.changes[0].at
    assert writer.product(T, "1").fields["price"] == 3.0


def test_an_unknown_tenant_is_not_found(tenants: Tenants) -> None:
    with pytest.raises(TenantNotFound):
        ChangeHistory(tenants).of("nobody", "1")
