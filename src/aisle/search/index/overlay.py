"""Per-row structures of a live index snapshot: the base version's, plus rows appended since, read-only.

A snapshot of a followed index (:mod:`aisle.search.index.live`) numbers the products written since its
catalog version after the version's rows: row ``o < len(base)`` is the version's, row ``len(base) + i``
the ``i``-th written since (a changed product gets a new row; its old one stays, unreachable: its
document is deleted). The follower appends to one shared *tail* per structure and never changes what
it appended; each snapshot sees a fixed length of it, so a snapshot is immutable, costs O(1) to make,
and an in-flight search holding an older one never reads a row its searcher cannot return.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeVar, overload

from aisle.search.index.rows import ProductRows

T = TypeVar("T")


class Appended(Sequence[T]):
    """``base`` followed by the first ``length - len(base)`` items of ``tail`` (a list only appended to).

    Raises IndexError past ``length``, as a list does."""

    __slots__ = ("_n0", "base", "length", "tail")

    def __init__(self, base: Sequence[T], tail: list[T], length: int) -> None:
        self.base = base
        self.tail = tail
        self._n0 = len(base)
        self.length = length

    def __len__(self) -> int:
        return self.length

    @overload
    def __getitem__(self, o: int) -> T: ...

    @overload
    def __getitem__(self, o: slice) -> list[T]: ...

    def __getitem__(self, o: int | slice) -> T | list[T]:
        if isinstance(o, slice):
            return [self[i] for i in range(*o.indices(self.length))]
        if o < 0:
            o += self.length
        if not 0 <= o < self.length:
            raise IndexError(f"row {o} out of range for {self.length} rows")
        return self.base[o] if o < self._n0 else self.tail[o - self._n0]

    def __iter__(self) -> Iterator[T]:
        yield from self.base
        yield from self.tail[: self.length - self._n0]


class LiveRows(Sequence[dict[str, Any]]):
    """:class:`~aisle.search.index.rows.ProductRows` plus appended rows (value tuples in its field order),
    with its API: ``rows[o]`` a new dict, ``rows[a:b]``, :meth:`value`, :attr:`fields`."""

    __slots__ = ("_n0", "base", "fields", "length", "tail")

    def __init__(self, base: ProductRows, tail: list[tuple[Any, ...]], length: int) -> None:
        self.base = base
        self.fields = base.fields
        self.tail = tail
        self._n0 = len(base)
        self.length = length

    def __len__(self) -> int:
        return self.length

    @overload
    def __getitem__(self, o: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, o: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, o: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if type(o) is int and 0 <= o < self._n0:
            return self.base[o]
        if isinstance(o, slice):
            return [self[i] for i in range(*o.indices(self.length))]
        return dict(zip(self.fields, self._values(o), strict=True))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for o in range(self.length):
            yield self[o]

    def value(self, o: int, field: str) -> Any:
        """Row ``o``'s value of ``field``. Raises KeyError, IndexError."""
        if 0 <= o < self._n0:
            return self.base.value(o, field)
        return self._values(o)[self.fields.index(field)]

    def _values(self, o: int) -> tuple[Any, ...]:
        if o < 0:
            o += self.length
        if not self._n0 <= o < self.length:
            if 0 <= o < self._n0:
                return tuple(self.base[o].values())
            raise IndexError(f"row {o} out of range for {self.length} rows")
        return self.tail[o - self._n0]


class LiveOrds(Mapping[str, int]):
    """Product id -> row: ``base`` (the version's rows) overridden by ``changed`` (the row of a product
    written since; -1 for one deleted). ``changed`` belongs to this snapshot: never modified after."""

    __slots__ = ("_len", "base", "changed")

    def __init__(self, base: Mapping[str, int], changed: dict[str, int]) -> None:
        self.base = base
        self.changed = changed
        self._len: int | None = None  # counted on first use: O(changed), and rarely asked

    def get(self, pid: str, default: Any = None) -> Any:  # type: ignore[override]
        o = self.changed.get(pid)
        if o is None:
            return self.base.get(pid, default)
        return default if o < 0 else o

    def __getitem__(self, pid: str) -> int:
        o = self.changed.get(pid)
        if o is None:
            return self.base[pid]
        if o < 0:
            raise KeyError(pid)
        return o

    def __contains__(self, pid: object) -> bool:
        o = self.changed.get(pid)  # type: ignore[call-overload]
        return pid in self.base if o is None else o >= 0

    def __len__(self) -> int:
        if self._len is None:
            base, changed = self.base, self.changed
            gone = sum(1 for pid, o in changed.items() if o < 0 and pid in base)
            fresh = sum(1 for pid, o in changed.items() if o >= 0 and pid not in base)
            self._len = len(base) - gone + fresh
        return self._len

    def __iter__(self) -> Iterator[str]:
        changed = self.changed
        yield from (pid for pid in self.base if pid not in changed)
        yield from (pid for pid, o in changed.items() if o >= 0)


def column_values(column: Sequence[Any], start: int, stop: int) -> list[Any]:
    """Items ``start:stop`` (``0 <= start <= stop <= len``) of a per-row column as a list: a polars
    Series (the version's), or an :class:`Appended` of one (its base read as a slice, not item by item)."""
    if isinstance(column, Appended):
        n0 = len(column.base)
        head = column_values(column.base, start, min(stop, n0)) if start < n0 else []
        return head + (column.tail[max(start - n0, 0) : stop - n0] if stop > n0 else [])
    part = column[start:stop]
    return part.to_list() if hasattr(part, "to_list") else list(part)
