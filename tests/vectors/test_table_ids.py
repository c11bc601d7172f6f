"""A vector table's ids and keys mapped from files (issue 42), against a list and a dict."""

from __future__ import annotations

from pathlib import Path

import orjson
from hypothesis import given
from hypothesis import strategies as st

from aisle.vectors.table_ids import IDS_PREFIX, load_ids

PIDS = st.sampled_from([f"p{i}" for i in range(12)])
OPS = st.lists(st.tuples(st.sampled_from(["upsert", "delete"]), PIDS), max_size=40)


def _table(tmp: Path, ids: list[str | None]) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "ids.json").write_bytes(orjson.dumps(ids))
    return tmp


@given(st.lists(PIDS, unique=True, max_size=8), st.integers(0, 3), OPS)
def test_writes_over_the_mapped_base_answer_as_a_list_and_a_dict(
    tmp_path_factory, base: list[str], deleted: int, ops: list[tuple[str, str]]
) -> None:  # type: ignore[no-untyped-def]
    start: list[str | None] = [None if i < deleted else pid for i, pid in enumerate(base)]
    ids, keys = load_ids(_table(tmp_path_factory.mktemp("t"), start))
    want_ids = list(start)
    want_keys = {pid: k for k, pid in enumerate(start) if pid is not None}
    for op, pid in ops:  # as VectorTable.upsert and delete change them
        if op == "upsert" and pid not in keys:
            ids.append(pid)
            keys[pid] = len(ids) - 1
            want_ids.append(pid)
            want_keys[pid] = len(want_ids) - 1
        elif op == "delete" and pid in keys:
            ids[keys.pop(pid)] = None
            want_ids[want_keys.pop(pid)] = None
    assert list(ids) == want_ids and len(ids) == len(want_ids)
    assert [ids[k] for k in range(len(ids))] == want_ids
    assert [ids[k] for k in range(-len(ids), 0)] == want_ids
    assert dict(keys) == want_keys and len(keys) == len(want_keys)
    for pid in [f"p{i}" for i in range(12)] + ["", "zz"]:
        assert keys.get(pid) == want_keys.get(pid) and (pid in keys) == (pid in want_keys)


def test_the_mapped_directory_is_derived_once_per_content(tmp_path: Path) -> None:
    table = _table(tmp_path / "t", ["a", None, "b"])
    ids, keys = load_ids(table)
    (first,) = table.glob(f"{IDS_PREFIX}*")
    stamp = (first / "ids.utf8").stat().st_mtime_ns
    again, _ = load_ids(table)  # a second worker: maps what the first wrote
    assert (first / "ids.utf8").stat().st_mtime_ns == stamp and list(again) == ["a", None, "b"]
    assert keys["b"] == 2 and "a" in keys and len(keys) == 2
    (table / "ids.json").write_bytes(orjson.dumps(["a", None, "b", "c"]))  # the table saved since
    ids, keys = load_ids(table)
    (second,) = table.glob(f"{IDS_PREFIX}*")
    assert second != first and list(ids) == ["a", None, "b", "c"] and keys["c"] == 3
