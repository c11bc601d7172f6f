"""The change log applied to an open index: tantivy deletes and adds, a commit, a new immutable snapshot.

A search process serves a tenant's catalog version from the index built for it
(:mod:`aisle.search.index.writer`), shared by every worker on the data dir. :class:`LiveIndex` follows
the tenant's change log (:mod:`aisle.catalog.changes`) on top of it:

* **A private writable copy, written apart.** tantivy allows one writer per index directory, and several
  workers share the built one, so the first apply copies the built index's files into
  ``<live dir>/<tenant>/<index name>.<host>-<pid>-<random>/`` and opens a writer there. The writing
  (:class:`~aisle.search.index.live_writer.LiveWriter`: the version's products with the log applied,
  each changed product's document deleted by its ``id`` term and its whole new one added under a *new
  row* numbered after the version's rows, one commit) runs in the search process's applier child
  (:mod:`aisle.search.index.applier`, ``AISLE_CATALOG_APPLIER=process``) or in the calling thread
  (``thread``); this process keeps its own reader of the copy and reloads it after each commit. The
  live dir is ``/dev/shm/aisle-live`` by default (``AISLE_CATALOG_LIVE_DIR``): the copy is made again
  from the bucket after any restart, so it needs no durability, and a commit in memory skips the disk's
  fsync (measured on this project's ext4: a commit of one product took about 45 ms on disk, 8 ms in
  /dev/shm; the goal is 50 ms from write to searchable). A copy that does not fit there goes to
  ``<data dir>/live``, where it is hard links: segment files are never changed once written and
  tantivy replaces ``meta.json`` and ``.managed.json`` by a rename, so the built index is never touched.
  Copies left by processes of this host that are gone are removed when a copy is made.
* **One document per product, as the build writes it** (:class:`~aisle.search.index.documents.DocumentPlan`):
  a patch changes the fields it names and keeps every other, searchable and filterable ones included; a
  deleted product's document is only deleted.
* **Snapshots.** Each apply ends with one commit and a reader reload, and returns a new
  :class:`~aisle.search.index.reader.TenantIndex`: the searcher of the commit, the rows, ids and
  searchable columns grown by the new rows (:mod:`aisle.search.index.overlay`, no copy of the version's),
  the id -> row map, the keyword spellings (a new brand filters case-insensitively), ``sequence`` (the
  last entry applied) and ``generation``. A search keeps the snapshot it started with (a tantivy
  searcher is a point-in-time view), so an apply never disturbs one.

The speller knows the words of the products written (a new product's own word is not "corrected"), but
corrects only to the version's words. What follows at the next compaction instead (a new version,
indexed whole): corrections to new words, the attribute dictionary (values recognised in a query's
words), typo expansions of words new to the catalog, the price range facet's bucket edges (the counts
are live), suggestions, and the vectors of new products (until then the hybrid stage skips them; a
changed product keeps its vector).
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import tantivy

from aisle.catalog.changes import Entry, Head
from aisle.catalog.schema import PATH_SEP
from aisle.core.tenant_config import AttributeType
from aisle.search.index.applier import Applier, RemoteWriter
from aisle.search.index.live_writer import LiveWriter, Touched, remove_dead_copies
from aisle.search.index.overlay import Appended, LiveOrds, LiveRows
from aisle.search.index.reader import TenantIndex, row_sources
from aisle.search.index.rows import ProductRows
from aisle.search.index.schema import ANALYZER, keyword_field
from aisle.search.spelling import GrownSpeller, text_words

__all__ = ["LIVE_DIR", "LiveIndex", "remove_dead_copies"]

log = logging.getLogger("aisle.search")

LIVE_DIR = "live"
"""The data dir's folder of the private index copies (``live/<tenant>/...``)."""
_NAMES = itertools.count(1)


class LiveIndex:
    """The change log applied to one opened index (see the module docstring).

    Args:
        base: the snapshot opened from the built index (its ``sequence``: the version's).
        path: the built index's directory.
        live_roots: where the private copy may go, first choice first (the last: ``<data dir>/live``,
            on the built index's file system, where the copy is hard links).
        products: loads the version's products (``id`` and one column per attribute), on first apply
            (in this process only without ``applier``: the child loads them itself).
        applier: the process's applier child, which then writes the copy (None: this thread does).

    Not for concurrent use: one caller applies at a time (the follower, or the request opening it).
    """

    def __init__(
        self,
        base: TenantIndex,
        path: Path,
        live_roots: list[Path],
        products: Callable[[], pl.DataFrame],
        applier: Applier | None = None,
    ) -> None:
        self.base = base
        self.path = Path(path)
        self.roots = [Path(root) for root in live_roots]
        self._products = products
        self._applier = applier
        self._lock = threading.Lock()
        self._writer: LiveWriter | RemoteWriter | None = None
        self._index: tantivy.Index | None = None
        self.copy: Path | None = None
        self._rows_base = base.rows
        self._rows_tail: list[tuple[Any, ...]] = []
        self._ids_tail: list[str] = []
        self._texts: list[tuple[str, list[Any]]] = []
        self._changed: dict[str, int] = {}
        self._words: dict[str, int] = {}
        self._keywords = [a for a in base.config.attributes if keyword_field(a)]
        self._sources: dict[str, str | None] = {}
        self.snapshot = base
        self.applied_at = float("-inf")
        """When entries were last applied (``time.monotonic()``; never: -inf)."""
        self.closed = False
        self.broken = False
        """Whether an apply failed half way: the copy is then unusable and the index is opened again."""
        self.lineage = f"{base.lineage or base.version}#{next(_NAMES)}"

    @property
    def sequence(self) -> int:
        """The last change-log entry applied (the version's own before any)."""
        return self.snapshot.sequence

    def _open(self) -> None:
        """Start the writer (it loads the version's products and makes the private copy) and open this
        process's reader of the copy."""
        base = self.base
        args = (base.tenant, base.version, base.sequence, self.path, self.roots, base.config)
        if self._applier is None:
            columns: list[str] = []

            def products() -> pl.DataFrame:
                frame = self._products()
                columns.extend(frame.columns)
                return frame

            local = LiveWriter(*args, products, len(self._rows_base))
            writer: LiveWriter | RemoteWriter = local
            index = local.index
        else:
            writer = self._applier.open(*args, len(self._rows_base))
            columns = writer.columns
            index = tantivy.Index.open(str(writer.copy))
            index.register_tokenizer(ANALYZER, base.analyzer)
        self._sources = row_sources(columns, base.config)
        self._texts = [(a.name, []) for a in base.config.attributes if a.searchable and a.name in columns]
        self._writer, self._index, self.copy = writer, index, writer.copy

    @property
    def tail_rows(self) -> int:
        """Rows written on top of the version (a product written twice counts twice)."""
        return len(self._rows_tail)

    def prepare(self) -> None:
        """Load the version's products and make the copy now rather than on the first apply (a version
        that compaction made: its tenant is being written, so the next write need not wait for them)."""
        with self._lock:
            if self._index is None and not self.closed:
                self._open()

    def apply(self, entries: Sequence[Entry | Head]) -> TenantIndex:
        """Apply ``entries`` (the next ones of the log, in order; those at or before :attr:`sequence`
        are skipped) and return the new snapshot (the current one when nothing was left to apply).

        Raises: ValueError for an entry out of order (a gap: the caller reopens the index), tantivy's
        errors, ApplierFailed (the applier process failed or is gone), and StorageUnavailable (503)
        loading the version's products on the first apply."""
        with self._lock:
            entries = [e for e in entries if e.seq > self.sequence]
            if not entries or self.closed:
                return self.snapshot
            if self._index is None:
                self._open()
            self.applied_at = time.monotonic()
            try:
                self.snapshot = self._apply(entries)
            except Exception:
                self.broken = True  # a failure half way leaves the copy unusable
                raise
            return self.snapshot

    def _apply(self, entries: Sequence[Entry | Head]) -> TenantIndex:
        """:meth:`apply`'s work, its lock held: the writer's commit, then the rows, words and keyword
        values of the products it touched, and the snapshot of the reloaded reader."""
        assert self._writer is not None and self._index is not None
        touched = self._writer.write(entries)
        changed = dict(self._changed)
        words = dict(self._words)
        keyword_values = dict(self.snapshot.keyword_values)
        self._grow(touched, changed, words, keyword_values)
        _reload(self._index)
        self._changed, self._words = changed, words
        return self._snapshot(changed, keyword_values, self._writer.sequence)

    def _grow(
        self,
        touched: list[Touched],
        changed: dict[str, int],
        words: dict[str, int],
        keyword_values: dict[str, dict[str, list[str]]],
    ) -> None:
        """Rows for the products ``touched`` (in row order), and their words and keyword values where
        they may be new."""
        copied: set[str] = set()
        for pid, row, fields, reworded in touched:
            changed[pid] = row
            if fields is None:
                continue
            assert row == len(self._rows_base) + len(self._rows_tail), "rows out of step with the writer"
            self._append_row(pid, fields)
            if not reworded:
                continue  # a price or stock change: no new word, no new keyword value
            self._add_keywords(keyword_values, copied, fields)
            for name, _ in self._texts:
                for word in text_words(str(fields.get(name) or "")):
                    words[word] = words.get(word, 0) + 1

    def _append_row(self, pid: str, fields: dict[str, Any]) -> None:
        self._rows_tail.append(
            tuple(
                pid if key == "id" else (fields.get(src) if src else None)
                for key, src in self._sources.items()
            )
        )
        self._ids_tail.append(pid)
        for name, tail in self._texts:
            tail.append(fields.get(name))

    def _add_keywords(
        self, keyword_values: dict[str, dict[str, list[str]]], copied: set[str], fields: dict[str, Any]
    ) -> None:
        """Add ``fields``' keyword values new to the snapshot to ``keyword_values``; an attribute's
        lookup is copied (``copied``: those copied in this apply) before it changes, and a spelling list
        replaced, so an older snapshot's stay as they were."""
        for attr in self._keywords:
            value = fields.get(attr.name)
            if not isinstance(value, str):
                continue
            values = [value]
            if attr.type is AttributeType.category_path:
                parts = value.split(PATH_SEP)
                values += [PATH_SEP.join(parts[:level]) for level in range(1, len(parts))]
            for v in values:
                lookup = keyword_values.get(attr.name, {})
                if v in lookup.get(v.lower(), ()):
                    continue
                if attr.name not in copied:
                    lookup = keyword_values[attr.name] = dict(lookup)
                    copied.add(attr.name)
                lookup[v.lower()] = sorted([*lookup.get(v.lower(), []), v])

    def _snapshot(
        self, changed: dict[str, int], keyword_values: dict[str, dict[str, list[str]]], sequence: int
    ) -> TenantIndex:
        assert self._index is not None
        n = len(self._rows_base) + len(self._rows_tail)
        base = self.base
        searchable = [
            Appended(column, tail, n) for column, (_, tail) in zip(base.searchable, self._texts, strict=False)
        ]
        rows = self._rows_base
        return dataclasses.replace(
            base,
            index=self._index,
            searcher=self._index.searcher(),
            rows=LiveRows(rows, self._rows_tail, n) if isinstance(rows, ProductRows) else rows,
            ids=Appended(base.ids, self._ids_tail, n),
            ord_by_id=LiveOrds(base.ord_by_id, changed),
            keyword_values=keyword_values,
            speller=GrownSpeller(base.speller, self._words) if self._words else base.speller,
            searchable=searchable,
            sequence=sequence,
            generation=self.snapshot.generation + 1,
            lineage=self.lineage,
        )

    def close(self) -> None:
        """Drop the writer and remove the private copy (a snapshot still searching keeps its open files)."""
        with self._lock:
            self.closed = True
            writer, self._writer, self._index = self._writer, None, None
            if writer is not None:
                writer.close()


def _reload(index: tantivy.Index, attempts: int = 3) -> None:
    """Reload ``index``'s reader after a commit. A copy written by the applier process may lose a merged
    segment's files between this process reading its ``meta.json`` and opening them (that process's
    tantivy removes files only its own readers no longer use): read the newer ``meta.json`` then."""
    for attempt in range(attempts):
        try:
            index.reload()
            return
        except ValueError:
            if attempt == attempts - 1:
                raise
            time.sleep(0.005)
