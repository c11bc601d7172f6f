"""The searchable text of an index build normalised in a helper process, a chunk ahead (issue 42).

Building a million products' documents is Python on one core: profiled at 300,000 generated products,
the building thread was busy 28.8 s of a 29.1 s build while tantivy's indexing thread used 12.5 s, and
:func:`~aisle.search.normalize.normalize` of the searchable values was half of the building. So for a
large build (:data:`MIN_ROWS` products or more) a helper process normalises chunk ``k + 1``'s
searchable columns while the builder makes chunk ``k``'s documents from the texts it normalised:
the same function on the same values, so the index is the same byte for byte, on the core the
builder left to tantivy. The helper is a fresh interpreter (``spawn``: the builder has threads), and a
smaller build, where its start-up would cost more than it saves, normalises in the builder. ``spawn``
imports the parent's ``__main__`` module under another name, as every entry point of Aisle allows (no
import-time side effects); a script without a ``__main__`` guard cannot build a large index.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any

from aisle.catalog.schema import PATH_SEP
from aisle.search.normalize import normalize

MIN_ROWS = 50_000
"""Builds of fewer products normalise in the building process."""
AHEAD = 2
"""Chunks submitted before the one being built (the helper never waits for the builder)."""


def searchable_text(value: Any) -> str:
    """What a searchable attribute's value is indexed as (category levels as words, normalised)."""
    return normalize(str(value).replace(PATH_SEP, " "))


def normalise_columns(columns: Sequence[Sequence[Any]]) -> list[list[str | None]]:
    """Each column's values as :func:`searchable_text` (None stays None). The helper's job."""
    return [[None if v is None else searchable_text(v) for v in column] for column in columns]


def helper_job(columns: Sequence[Sequence[Any]]) -> list[list[str | None]]:
    """What the helper process runs on a chunk (:func:`normalise_columns`)."""
    return normalise_columns(columns)


class TextPrep:
    """Normalised searchable columns per chunk: ``prep.next()`` is :func:`normalise_columns` of the next
    chunk's columns, computed in the helper process and asked for :data:`AHEAD` chunks early. Should
    the helper fail (killed, out of memory), the chunks left are normalised here: the same texts."""

    def __init__(self, pool: ProcessPoolExecutor, chunks: Iterator[Sequence[Sequence[Any]]]) -> None:
        self._pool: ProcessPoolExecutor | None = pool
        self._chunks = chunks
        self._pending: list[tuple[Future[list[list[str | None]]] | None, Sequence[Sequence[Any]]]] = []
        for _ in range(AHEAD + 1):
            self._submit()

    def _submit(self) -> None:
        chunk = next(self._chunks, None)
        if chunk is None:
            return
        future = None
        if self._pool is not None:
            try:
                future = self._pool.submit(helper_job, chunk)
            except Exception:  # a broken pool: this process does the rest
                self._pool = None
        self._pending.append((future, chunk))

    def next(self) -> list[list[str | None]]:
        """The next chunk's normalised columns (in the order the chunks came)."""
        future, chunk = self._pending.pop(0)
        done = None
        if future is not None:
            try:
                done = future.result()
            except Exception:
                self._pool = None
        self._submit()
        return done if done is not None else normalise_columns(chunk)


@contextmanager
def text_prep(rows: int, chunks: Iterator[Sequence[Sequence[Any]]]) -> Iterator[TextPrep | None]:
    """A :class:`TextPrep` over ``chunks`` (each a list of searchable columns) for a build of ``rows``
    products, or None for a build too small to pay for the helper (normalise in the builder)."""
    if rows < MIN_ROWS:
        yield None
        return
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield TextPrep(pool, chunks)
