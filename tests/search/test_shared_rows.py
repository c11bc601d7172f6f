"""Product rows written once beside their index and memory-mapped by every worker of the host
(aisle.search.index.shared_rows, issue 42): the same rows as built in memory, built only once, and
served from memory when they cannot be written."""

from __future__ import annotations

import mmap
from pathlib import Path

import pytest

from aisle.core.mapped import FileSlices
from aisle.search.index.rows import ProductRows
from aisle.search.index.shared_rows import ROWS_DIR, load_rows, shared_rows

FIELDS = ["id", "title", "price", "active", "tags"]
ROWS = [
    ("a", "Red Shoe", 49.5, True, None),
    ("b", "Blue Shirt ü", 20, False, "x"),
    ("c", None, None, None, ""),
]


def test_rows_are_written_once_and_mapped_with_the_same_values(tmp_path: Path) -> None:
    built: list[int] = []

    def build() -> ProductRows:
        built.append(1)
        return ProductRows(FIELDS, ROWS)

    first = shared_rows(tmp_path, build)
    second = shared_rows(tmp_path, build)  # another worker of the host: maps, builds nothing
    assert built == [1]
    memory = ProductRows(FIELDS, ROWS)
    for rows in (first, second):
        assert isinstance(rows.parts()[0], FileSlices) and isinstance(rows.parts()[1].obj, mmap.mmap)
        assert list(rows) == list(memory) and rows[1:3] == memory[1:3] and rows[-1] == memory[-1]
        assert rows.value(1, "price") == 20 and type(rows.value(1, "price")) is int
        with pytest.raises(IndexError):
            rows.value(3, "id")


def test_no_rows_and_a_half_written_directory(tmp_path: Path) -> None:
    assert list(shared_rows(tmp_path / "empty", lambda: ProductRows(FIELDS, []))) == []
    assert list(shared_rows(tmp_path / "empty", lambda: ProductRows(FIELDS, ROWS))) == []  # kept
    (tmp_path / "half" / ROWS_DIR).mkdir(parents=True)
    (tmp_path / "half" / ROWS_DIR / "values.bin").write_bytes(b"torn")
    assert load_rows(tmp_path / "half" / ROWS_DIR) is None


def test_rows_that_cannot_be_written_are_served_from_memory(tmp_path: Path) -> None:
    blocked = tmp_path / "a file"  # where the index directory should be: the write fails (OSError)
    blocked.write_text("")
    rows = shared_rows(blocked, lambda: ProductRows(FIELDS, ROWS))
    assert list(rows) == list(ProductRows(FIELDS, ROWS)) and isinstance(rows.parts()[0], bytes)
