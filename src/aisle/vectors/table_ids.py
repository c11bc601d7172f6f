"""A vector table's keys and product ids, mapped from files shared by a host's processes (issue 42).

A table's ``ids.json`` (key -> product id, null for a deleted key) was read into each search worker as a
list, and inverted into a dict: at a million products some 150 MB of heap a worker, the second worker
as much as the first. :func:`load_ids` derives, once per host and per content of ``ids.json``, a
directory of mapped tables beside it (``ids-<digest>/``: the ids as strings, an empty string for a
deleted key, and their :class:`~aisle.core.id_lookup.IdLookup` slots), and serves them as
:class:`TableIds` and :class:`TableKeys`: the mapped base plus what this process wrote since
(:meth:`~aisle.vectors.table.VectorTable.upsert`, ``delete``), kept in small dicts. ``ids.json``
stays the table's format (builds, the bucket's published copies, :meth:`VectorTable.save`).
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator, MutableMapping, Sequence
from pathlib import Path

import orjson

from aisle.core.id_lookup import IdLookup, build_slots
from aisle.core.mapped import MappedTables, host_lock, write_tables

IDS_PREFIX = "ids-"


class TableIds(Sequence[str | None]):
    """Key -> product id (None: deleted): ``base`` (``""`` for a deleted key), then keys appended,
    with this process's changes on top. Supports ``ids[key]``, ``ids[key] = pid``, ``append``."""

    __slots__ = ("_n0", "base", "changed", "tail")

    def __init__(self, base: Sequence[str]) -> None:
        self.base = base
        self._n0 = len(base)
        self.tail: list[str | None] = []
        self.changed: dict[int, str | None] = {}

    def __len__(self) -> int:
        return self._n0 + len(self.tail)

    def __getitem__(self, key: int) -> str | None:  # type: ignore[override]
        if key < 0:
            key += len(self)
        if self.changed and key in self.changed:
            return self.changed[key]
        if 0 <= key < self._n0:
            return self.base[key] or None
        return self.tail[key - self._n0]

    def __setitem__(self, key: int, pid: str | None) -> None:
        if key < self._n0:
            self.changed[key] = pid
        else:
            self.tail[key - self._n0] = pid

    def append(self, pid: str | None) -> None:
        self.tail.append(pid)

    def __iter__(self) -> Iterator[str | None]:
        changed = self.changed
        for key, pid in enumerate(self.base):
            yield changed.get(key, pid or None)
        yield from self.tail


class TableKeys(MutableMapping[str, int]):
    """Product id -> key: ``base`` (a lookup over the base ids) overridden by this process's writes."""

    __slots__ = ("_len", "base", "changed")

    def __init__(self, base: IdLookup, present: int) -> None:
        self.base = base
        self.changed: dict[str, int] = {}  # -1: deleted since
        self._len = present

    def get(self, pid: str, default: int | None = None) -> int | None:  # type: ignore[override]
        key = self.changed.get(pid)
        if key is None:
            key = self.base.get(pid) if pid else None
            return default if key is None else key
        return default if key < 0 else key

    def __getitem__(self, pid: str) -> int:
        key = self.get(pid)
        if key is None:
            raise KeyError(pid)
        return key

    def __contains__(self, pid: object) -> bool:
        return isinstance(pid, str) and self.get(pid) is not None

    def __setitem__(self, pid: str, key: int) -> None:
        if pid not in self:
            self._len += 1
        self.changed[pid] = key

    def __delitem__(self, pid: str) -> None:
        if pid not in self:
            raise KeyError(pid)
        self.changed[pid] = -1
        self._len -= 1

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[str]:
        for pid in self.base:
            if pid and (pid not in self.changed or self.changed[pid] >= 0):
                yield pid
        yield from (pid for pid, key in self.changed.items() if key >= 0 and self.base.get(pid) is None)


def load_ids(table: Path) -> tuple[TableIds, TableKeys]:
    """The ids and keys of the table at ``table``, mapped from ``ids-<digest>/`` beside its
    ``ids.json`` (written first when missing, one process of the host at a time; the directories of
    older contents removed). Raises OSError (unreadable or unwritable files)."""
    raw = (table / "ids.json").read_bytes()
    dest = table / f"{IDS_PREFIX}{hashlib.sha1(raw).hexdigest()[:16]}"
    tables = MappedTables.open(dest)
    if tables is None:
        with host_lock(table / ".ids.lock"):
            tables = MappedTables.open(dest)
            if tables is None:
                ids = ["" if pid is None else pid for pid in orjson.loads(raw)]
                del raw
                with write_tables(dest) as writer:
                    writer.strings("ids", ids)
                    writer.array("slots", build_slots(ids))
                    writer.meta["present"] = sum(1 for pid in ids if pid)
                del ids
                for old in table.glob(f"{IDS_PREFIX}*"):
                    if old != dest and old.is_dir():
                        shutil.rmtree(old, ignore_errors=True)  # a process mapping them keeps its pages
                tables = MappedTables.open(dest)
                assert tables is not None
    base = tables.strings("ids")
    return TableIds(base), TableKeys(IdLookup(base, tables.array("slots")), int(tables.meta["present"]))
