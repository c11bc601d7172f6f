"""Mapped tables (issue 42): what is written is what every reader maps, all of it or none."""

from __future__ import annotations

import bisect
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from aisle.core.mapped import FileSlices, MappedStrings, MappedTables, write_tables


@given(st.lists(st.text(max_size=12), max_size=40))
def test_strings_round_trip_in_memory(values: list[str]) -> None:
    strings = MappedStrings.of(values)
    assert len(strings) == len(values)
    assert list(strings) == values
    assert [strings[i] for i in range(-len(values), len(values))] == values + values
    assert strings[1:3] == values[1:3]


def test_tables_written_then_mapped(tmp_path: Path) -> None:
    dest = tmp_path / "t"
    words = sorted(["shoe", "shirt", "nike", "café", ""])
    with write_tables(dest) as writer:
        writer.array("a", np.arange(6, dtype=np.int32).reshape(2, 3))
        writer.array("empty", np.zeros(0, dtype=np.int64))
        writer.strings("words", words)
        writer.strings("none", [])
        writer.meta["bounds"] = [0, 2]
    tables = MappedTables.open(dest)
    assert tables is not None and tables.meta == {"bounds": [0, 2]}
    a = tables.array("a")
    assert isinstance(a, np.memmap) and a.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert not a.flags.writeable
    assert tables.array("empty").shape == (0,)
    mapped = tables.strings("words")
    assert list(mapped) == words and len(tables.strings("none")) == 0
    assert bisect.bisect_left(mapped, "sh") == words.index("shirt")  # sorted strings: bisect works
    with pytest.raises(IndexError):
        mapped[len(words)]


def test_a_failed_write_leaves_nothing(tmp_path: Path) -> None:
    dest = tmp_path / "t"
    with pytest.raises(RuntimeError), write_tables(dest) as writer:
        writer.strings("words", ["a", "b"])
        raise RuntimeError("disk full")
    assert not dest.exists() and list(tmp_path.iterdir()) == []
    assert MappedTables.open(dest) is None


def test_file_slices_read_what_a_bytes_slice_would(tmp_path: Path) -> None:
    data = bytes(range(256)) * 5
    (tmp_path / "f").write_bytes(data)
    (tmp_path / "empty").write_bytes(b"")
    slices = FileSlices(tmp_path / "f")
    assert len(slices) == len(data)
    for part in (slice(0, 10), slice(250, 700), slice(1270, 2000), slice(5, 5), slice(-10, None)):
        assert slices[part] == data[part]
    assert FileSlices(tmp_path / "empty")[0:10] == b""
