"""Catalog rows held compactly in a search worker (issue 32, "memory per search worker").

A worker keeps every open tenant's returned product fields in memory so a page of hits is rendered
without reading tantivy's stored documents. As a ``list`` of ``dict`` they cost about 1.7 KB per fashion
product (a dict, and a Python object per value; 168 MB for the four demo tenants). :class:`ProductRows`
holds the same values pickled, one value tuple per row in one ``bytes`` buffer (56 MB for the four),
and hands out a fresh ``dict`` per read.

Other layouts measured on fashion in the same run (bytes held; a page of 20 random rows as dicts):
pickled value tuples 33 MB, 54 µs (this one); the polars frame read with ``row(o, named=True)`` 30 MB,
123 µs; a UTF-8 blob per column 34 MB, 149 µs; pickles compressed by zlib with a preset dictionary
11 MB, 134 µs.
"""

from __future__ import annotations

import io
import pickle
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

_PROTOCOL = 5
_loads = pickle.loads


class ProductRows(Sequence[dict[str, Any]]):
    """The returned fields of every catalog row, read-only: ``rows[o]`` is row ``o`` as a new dict.

    Args:
        fields: the keys of every row, in order (``("id", "title", ...)``).
        rows: one tuple of values per row, in row order, each ``len(fields)`` long, values picklable
            (the catalog's are ``str``, ``float``, ``int``, ``bool`` and ``None``).

    ``rows[o]`` (``o`` an int, negative counts from the end) is ``dict(zip(fields, values))``: equal to the
    row given, same key order, values of the same types (a pickle round trip), and a new dict and new
    value objects each time, so a caller may change it freely. ``rows[a:b]`` is a list of such dicts.
    :meth:`value` reads one field without building the dict.

    Layout: row ``o``'s tuple pickled (protocol 5) at ``buffer[offsets[o]:offsets[o + 1]]``, ``offsets``
    an int64 array of ``len + 1`` entries. Measured on the fashion demo catalog (issue 32): 736 bytes a
    row against 1,742 as dicts (tracemalloc); a page of 20 random rows read in about 50 µs against 21 µs
    for copies of stored dicts, so a search (about 0.85 ms) takes some 45 µs (5%) longer.

    Raises:
        ValueError: a row whose length is not ``len(fields)``.
    """

    __slots__ = ("_buffer", "_index", "_offsets", "fields")

    def __init__(self, fields: Sequence[str], rows: Iterable[tuple[Any, ...]]) -> None:
        self.fields: tuple[str, ...] = tuple(fields)
        self._index = {name: i for i, name in enumerate(self.fields)}
        width = len(self.fields)
        offsets = array("q", [0])
        end = 0
        dumps = pickle.dumps
        with io.BytesIO() as out:  # getvalue() hands over its buffer: no second copy at the end
            for values in rows:
                if len(values) != width:
                    raise ValueError(f"row {len(offsets) - 1} has {len(values)} values for {width} fields")
                end += out.write(dumps(tuple(values), protocol=_PROTOCOL))
                offsets.append(end)
            self._buffer = out.getvalue()
        self._offsets = offsets

    @classmethod
    def mapped(cls, fields: Sequence[str], buffer: Any, offsets: Any) -> ProductRows:
        """Rows over a buffer and offsets made by another (:mod:`aisle.search.index.shared_rows`:
        memory-mapped files, so the workers of a host share one copy). ``offsets``: a sequence of int."""
        self = cls.__new__(cls)
        self.fields = tuple(fields)
        self._index = {name: i for i, name in enumerate(self.fields)}
        self._buffer, self._offsets = buffer, offsets
        return self

    def parts(self) -> tuple[Any, Any]:
        """The buffer of pickles and the ``len + 1`` offsets into it (what :meth:`mapped` takes)."""
        return self._buffer, self._offsets

    def __len__(self) -> int:
        return len(self._offsets) - 1

    @overload
    def __getitem__(self, o: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, o: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, o: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        offsets = self._offsets
        if type(o) is int and 0 <= o < len(offsets) - 1:  # the hot path (a page of hits), inlined
            row = _loads(self._buffer[offsets[o] : offsets[o + 1]])
            return dict(zip(self.fields, row, strict=False))  # widths checked when built
        if isinstance(o, slice):
            return [self[i] for i in range(*o.indices(len(self)))]
        return dict(zip(self.fields, self._values(o), strict=False))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for o in range(len(self)):
            yield self[o]

    def value(self, o: int, field: str) -> Any:
        """Row ``o``'s value of ``field`` (as ``rows[o][field]``). Raises KeyError, IndexError."""
        return self._values(o)[self._index[field]]

    def _values(self, o: int) -> tuple[Any, ...]:
        n = len(self)
        if o < 0:
            o += n
        if not 0 <= o < n:
            raise IndexError(f"row {o} out of range for {n} rows")
        offsets = self._offsets
        return pickle.loads(self._buffer[offsets[o] : offsets[o + 1]])  # type: ignore[no-any-return]
