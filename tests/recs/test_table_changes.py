"""The predict engine's product table following the catalog change log: delete, patch, upsert, stock."""

from __future__ import annotations

import polars as pl
import pytest

from aisle.catalog.changes import Entry, Op
from aisle.recs.serving.products import ProductTable
from aisle.recs.serving.table_changes import apply_entries

PRODUCTS = pl.DataFrame(
    {
        "id": ["a", "b", "c", "d"],
        "title": ["A", "B", "C", "D"],
        "price": [10.0, 20.0, 30.0, 40.0],
        "category": ["Shoes > Run", "Shoes > Walk", "Bags", "Shoes > Run"],
    }
)
ROLES = {"title": "title", "price": "price", "category": "category"}


def table() -> ProductTable:
    return ProductTable.from_frame("v1", PRODUCTS, ROLES, seq=3)


def entry(seq: int, *ops: Op) -> Entry:
    return Entry(seq, list(ops))


def op(kind: str, pid: str, **fields: object) -> Op:
    return Op(kind, pid, 1, dict(fields))  # type: ignore[arg-type]


def category_ids(t: ProductTable, category: str) -> list[str]:
    return [t.ids[r] for r in t.category_rows(category)]


def test_delete_leaves_the_index_and_categories_and_is_gone() -> None:
    before = table()
    after = apply_entries(before, [entry(4, op("delete", "a"))])
    assert after.seq == 4 and after.row("a") is None and "a" in after.gone
    assert category_ids(after, "Shoes") == ["b", "d"] and category_ids(after, "Shoes > Run") == ["d"]
    # the snapshot a request holds is untouched
    assert before.row("a") == 0 and not before.gone and category_ids(before, "Shoes") == ["a", "b", "d"]


def test_patch_changes_only_its_fields_and_moves_the_category() -> None:
    before = table()
    after = apply_entries(before, [entry(4, op("patch", "c", price=5, category="Shoes > Walk"))])
    row = after.row("c")
    assert row == 2 and after.value(row, "price") == 5 and after.value(row, "title") == "C"
    assert category_ids(after, "Shoes > Walk") == ["b", "c"] and category_ids(after, "Bags") == []
    assert before.value(2, "price") == 30.0 and category_ids(before, "Bags") == ["c"]
    assert after.columns["title"] is before.columns["title"]  # columns not written are shared


def test_upsert_creates_a_row_with_every_column_and_a_new_field() -> None:
    before = table()
    after = apply_entries(
        before,
        [entry(4, op("upsert", "e", title="E", category="Bags", availability="OUT_OF_STOCK"))],
    )
    row = after.row("e")
    assert row == 4 and after.ids[row] == "e" and after.value(row, "price") is None
    assert after.value(row, "availability") == "OUT_OF_STOCK" and after.value(0, "availability") is None
    assert category_ids(after, "Bags") == ["c", "e"]
    assert len(before.ids) == 4 and "e" not in before.index and "availability" not in before.columns
    assert not after.in_stock(row) and after.in_stock(0)


def test_upsert_replaces_the_whole_product() -> None:
    after = apply_entries(table(), [entry(4, op("upsert", "b", title="B2"))])
    row = after.row("b")
    assert row == 1 and after.value(row, "title") == "B2" and after.value(row, "price") is None
    assert category_ids(after, "Shoes > Walk") == []


def test_deleted_then_written_again_comes_back() -> None:
    after = apply_entries(table(), [entry(4, op("delete", "a")), entry(5, op("upsert", "a", title="A2"))])
    assert after.seq == 5 and "a" not in after.gone and after.value(after.row("a"), "title") == "A2"


def test_several_entries_in_one_round_and_none() -> None:
    t = table()
    assert apply_entries(t, []) is t
    after = apply_entries(t, [entry(4, op("patch", "a", price=1)), entry(5, op("patch", "a", price=2))])
    assert after.seq == 5 and after.value(0, "price") == 2


def test_an_entry_out_of_order_is_refused() -> None:
    with pytest.raises(ValueError, match="change 6 applied on top of 3"):
        apply_entries(table(), [entry(6, op("delete", "a"))])


def test_inventories_merge_store_by_store() -> None:
    stores = {"s1": {"availability": "IN_STOCK", "quantity": 3}, "s2": {"availability": "OUT_OF_STOCK"}}
    after = apply_entries(
        table(),
        [
            entry(4, op("patch", "a", inventories=stores)),
            entry(5, op("patch", "a", inventories={"s2": {"availability": "IN_STOCK"}, "s1": None})),
            entry(6, op("upsert", "a", title="A2")),  # an upsert without inventories keeps them
        ],
    )
    row = after.row("a")
    assert after.value(row, "inventories") == {"s2": {"availability": "IN_STOCK"}}
    assert after.in_stock(row, "s2") and not after.in_stock(row, "s1") and not after.in_stock(1, "s2")


def test_inventories_from_a_catalog_version_are_json_text() -> None:
    frame = PRODUCTS.with_columns(
        pl.Series("inventories", ['{"s1": {"availability": "IN_STOCK"}}', None, None, None])
    )
    t = ProductTable.from_frame("v1", frame, ROLES)
    assert t.in_stock(0, "s1") and not t.in_stock(0, "s9") and not t.in_stock(1, "s1")
    after = apply_entries(t, [entry(1, op("patch", "a", inventories={"s9": {"availability": "BACKORDER"}}))])
    assert after.in_stock(0, "s1") and after.in_stock(0, "s9")
