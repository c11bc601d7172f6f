"""Read-only tables in files, memory-mapped so every process of a host shares one copy (issue 42).

A search worker used to build each tenant's lookup tables (product ids, the id lookup, the suggestion
index) in its own heap: two workers held two copies, and at a million products they were most of the
gigabyte each worker added. Written once into a directory beside the data they derive from and mapped
read-only, their pages sit in the page cache once, shared by every process that maps them, and only the
pages a request touches are read.

Three kinds of file, written by :class:`TableWriter` and read by :class:`MappedTables`:

- arrays: numpy ``.npy`` files, read with ``numpy.load(mmap_mode="r")``;
- strings: ``<name>.offsets`` (``len + 1`` little-endian int64) and ``<name>.utf8`` (the strings'
  UTF-8 bytes end to end), read as a :class:`MappedStrings` sequence that decodes one string per access;
- ``meta.json``: small values (a few kilobytes), read into memory.

The directory is written into a temporary sibling and renamed into place (:func:`~aisle.core.
atomic_dir.atomic_directory`) with a ``DONE`` marker last, so a reader sees all of it or none; two
processes writing the same directory keep the first.
"""

from __future__ import annotations

import fcntl
import itertools
import mmap
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, overload

import numpy as np
import numpy.typing as npt
import orjson

from aisle.core.atomic_dir import atomic_directory

DONE = "DONE"


def map_file(path: Path, *, random: bool = True) -> mmap.mmap | bytes:
    """``path`` mapped read-only (an empty file: ``b""``, which mmap refuses). Raises OSError.

    ``random``: read at random places (a lookup, a row): the kernel is told (``MADV_RANDOM``), so a page
    fault reads that page, not the 128 KiB around it. Without it, 1,000 searches of 20 random rows had
    pulled 435 of a 440 MiB rows file into a worker's resident memory (issue 42)."""
    with path.open("rb") as fh:
        if os.fstat(fh.fileno()).st_size == 0:
            return b""
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    if random and hasattr(mmap, "MADV_RANDOM"):
        mapped.madvise(mmap.MADV_RANDOM)
    return mapped


class FileSlices:
    """A file read by slices with ``os.pread``: ``slices[a:b]`` is bytes ``a..b`` (a read each time).

    For data read a few hundred bytes at a time at random places (a page of search results' rows):
    the pages go through the page cache, shared by every process of the host and given back under
    memory pressure, without counting in any process's resident memory, as a database's point reads
    do (Typesense reads its documents from RocksDB so). Thread-safe (``pread`` has no file position).
    The file stays open while the object lives. Raises OSError (unreadable file)."""

    __slots__ = ("_fd", "_size")

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        self._size = os.fstat(self._fd).st_size

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, part: slice) -> bytes:
        start, stop, _ = part.indices(self._size)
        return os.pread(self._fd, max(stop - start, 0), start)

    def __del__(self) -> None:
        fd, self._fd = getattr(self, "_fd", -1), -1
        if fd >= 0:
            os.close(fd)


class MappedStrings(Sequence[str]):
    """A read-only sequence of strings over a UTF-8 buffer and ``len + 1`` int64 offsets.

    ``strings[i]`` decodes string ``i`` (a new ``str`` each time); ``strings[a:b]`` is a list. Works over
    mapped files (:meth:`MappedTables.strings`) or in-memory buffers (:meth:`of`). ``bisect`` works on
    it directly when the strings were written sorted (code point order).
    """

    __slots__ = ("_buffer", "_offsets")

    def __init__(self, buffer: Any, offsets: npt.NDArray[np.int64]) -> None:
        self._buffer = buffer
        self._offsets = offsets

    @classmethod
    def of(cls, strings: Iterable[str]) -> MappedStrings:
        """The strings held in memory in this layout (what :meth:`TableWriter.strings` writes)."""
        buffer, offsets = encode_strings(strings)
        return cls(buffer, offsets)

    def __len__(self) -> int:
        return len(self._offsets) - 1

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"string {i} out of range for {n}")
        start, end = self._offsets[i], self._offsets[i + 1]
        return bytes(self._buffer[start:end]).decode()

    def __iter__(self) -> Iterator[str]:
        buffer, offsets = self._buffer, self._offsets.tolist()
        for start, end in itertools.pairwise(offsets):
            yield bytes(buffer[start:end]).decode()


def encode_strings(strings: Iterable[str]) -> tuple[bytes, npt.NDArray[np.int64]]:
    """(UTF-8 bytes end to end, ``len + 1`` int64 offsets) of ``strings``."""
    encoded = [s.encode() for s in strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    if encoded:
        np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    return b"".join(encoded), offsets


class TableWriter:
    """Files of one table directory, written into the temporary directory ``tmp`` (:func:`write_tables`)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.meta: dict[str, Any] = {}

    def array(self, name: str, values: npt.ArrayLike) -> None:
        """Write ``values`` as ``<name>.npy`` (any numeric dtype; object arrays are refused by numpy)."""
        np.save(self.tmp / f"{name}.npy", np.asarray(values), allow_pickle=False)

    def strings(self, name: str, values: Iterable[str]) -> None:
        """Write ``values`` as ``<name>.offsets`` and ``<name>.utf8`` (see the module)."""
        buffer, offsets = encode_strings(values)
        offsets.astype("<i8").tofile(self.tmp / f"{name}.offsets")
        (self.tmp / f"{name}.utf8").write_bytes(buffer)


@contextmanager
def write_tables(dest: Path) -> Iterator[TableWriter]:
    """Yield a :class:`TableWriter`; when the block ends without an error, its files (and ``meta``, as
    ``meta.json``) become directory ``dest`` at once. On an error nothing is left.

    Raises:
        OSError: the disk is full or read-only, or ``dest`` exists unfinished.
    """
    with atomic_directory(dest, DONE) as tmp:
        writer = TableWriter(tmp)
        yield writer
        (tmp / "meta.json").write_bytes(orjson.dumps(writer.meta))
        (tmp / DONE).write_text("ok")


class MappedTables:
    """The tables of a finished directory, mapped read-only (:meth:`open`)."""

    def __init__(self, path: Path, meta: dict[str, Any]) -> None:
        self.path = path
        self.meta = meta

    @classmethod
    def open(cls, path: Path) -> MappedTables | None:
        """The tables in ``path``, or None when it holds no finished directory. Raises OSError."""
        if not (path / DONE).exists():
            return None
        return cls(path, orjson.loads((path / "meta.json").read_bytes()))

    def array(self, name: str) -> npt.NDArray[Any]:
        """``<name>.npy`` mapped read-only, for random access (``MADV_RANDOM``: see :func:`map_file`)."""
        array = np.load(self.path / f"{name}.npy", mmap_mode="r", allow_pickle=False)
        mapped = getattr(array, "_mmap", None)
        if mapped is not None and hasattr(mmap, "MADV_RANDOM"):
            mapped.madvise(mmap.MADV_RANDOM)
        return array  # type: ignore[no-any-return]

    def strings(self, name: str) -> MappedStrings:
        """``<name>.offsets`` / ``<name>.utf8`` as a :class:`MappedStrings`."""
        offsets = map_file(self.path / f"{name}.offsets")
        view = np.frombuffer(offsets, dtype="<i8") if offsets else np.zeros(1, dtype=np.int64)
        return MappedStrings(map_file(self.path / f"{name}.utf8"), view)


@contextmanager
def host_lock(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` (created when missing), released on leaving the block or when
    the process dies: one process of the host at a time builds what the others then map. Where the lock
    file cannot be created (a read-only directory) the block runs unlocked: its writes fail there too,
    and the caller's fallback (tables kept in memory) takes over."""
    try:
        fh = path.open("a")
    except OSError:
        yield
        return
    with fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
