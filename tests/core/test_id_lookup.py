"""The mapped id lookup (issue 42) against a dict, with real and with forced hash collisions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from aisle.core import id_lookup
from aisle.core.id_lookup import IdLookup, build_slots
from aisle.core.mapped import MappedStrings, MappedTables, write_tables

KEYS = st.lists(st.text(min_size=0, max_size=8), unique=True, max_size=60)


def _check(lookup: IdLookup, keys: list[str], absent: list[str]) -> None:
    assert len(lookup) == len(keys) and list(lookup) == keys
    for row, key in enumerate(keys):
        assert lookup[key] == row and lookup.get(key) == row and key in lookup
    for key in absent:
        if key not in keys:
            assert lookup.get(key) is None and lookup.get(key, -1) == -1 and key not in lookup
            with pytest.raises(KeyError):
                lookup[key]
    assert 1 not in lookup and lookup.get(None) is None  # type: ignore[call-overload]


@given(KEYS, st.lists(st.text(max_size=8), max_size=20))
def test_a_lookup_answers_as_a_dict(keys: list[str], absent: list[str]) -> None:
    slots = build_slots(keys)
    assert len(slots) >= 2 * len(keys) and len(slots) & (len(slots) - 1) == 0
    assert sorted(slots[slots > 0].tolist()) == list(range(1, len(keys) + 1))  # each row once
    _check(IdLookup(MappedStrings.of(keys), slots), keys, absent)


@given(KEYS, st.lists(st.text(max_size=8), max_size=20))
def test_colliding_hashes_are_probed_past(keys: list[str], absent: list[str]) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(id_lookup, "key_hash", lambda key: len(key) % 3)  # long runs of one slot
        _check(IdLookup.of(keys), keys, absent)


def test_a_lookup_over_mapped_tables(tmp_path: Path) -> None:
    keys = [f"sku-{i}" for i in range(5000)]
    with write_tables(tmp_path / "t") as writer:
        writer.strings("ids", keys)
        writer.array("slots", build_slots(keys))
    tables = MappedTables.open(tmp_path / "t")
    assert tables is not None
    lookup = IdLookup(tables.strings("ids"), tables.array("slots"))
    assert isinstance(lookup.slots, np.memmap)
    _check(lookup, keys, ["sku-5000", "", "sku-"])
