"""The writing half of a followed index: the change log turned into tantivy deletes, adds and a commit.

:class:`~aisle.search.index.live.LiveIndex` serves snapshots of an index that follows the tenant's change
log; :class:`LiveWriter` is what writes that index. It holds the catalog version's products with the
entries applied since (:class:`~aisle.catalog.state.CatalogState`), the private writable copy of the
built index and its tantivy writer (see :mod:`aisle.search.index.live` for where the copy goes and why).
:meth:`LiveWriter.write` applies entries and commits, and returns what a server of the index needs to
know of each product it touched: its new row, its fields, and whether its words may have changed.

It runs in the search process itself (``AISLE_CATALOG_APPLIER=thread``) or in a child process of it
(``process``, the default: :mod:`aisle.search.index.applier`), where building the documents never holds
the interpreter lock the process's searches need.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import tantivy

from aisle.catalog.changes import Entry, Head
from aisle.catalog.state import CatalogState
from aisle.core.tenant_config import AttributeConfiguration
from aisle.search.index.documents import DocumentPlan
from aisle.search.index.schema import ANALYZER, build_analyzer, keyword_field

WRITER_HEAP = 20_000_000
"""Bytes of the copy's tantivy writer (tantivy's least is 15 MB per thread): a few thousand products
written between two follower ticks fit."""
_HOST = socket.gethostname()

Touched = tuple[str, int, dict[str, Any] | None, bool]
"""One product an apply touched: ``(id, row, fields, reworded)``. ``row``: its new catalog row (-1:
deleted, ``fields`` None); ``fields``: the whole product as the version stores it (attribute name ->
value, ``inventories`` included); ``reworded``: its searchable or keyword values may have changed (an
upsert, or a patch naming one of those fields)."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_dead_copies(folder: Path) -> int:
    """Remove the copies in ``folder`` (a tenant's ``live/`` folder) made by processes of this host that
    have exited; returns how many went. A copy is named ``<index name>.<host>-<pid>-<random>`` (an index
    name has no dot)."""
    gone = 0
    for path in folder.iterdir() if folder.is_dir() else []:
        owner = path.name.split(".", 1)[-1].rsplit("-", 2)
        if len(owner) != 3 or owner[0] != _HOST or not owner[1].isdigit() or _alive(int(owner[1])):
            continue
        shutil.rmtree(path, ignore_errors=True)
        gone += 1
    return gone


def copy_index(source: Path, dest: Path) -> None:
    """``source``'s index files hard-linked into the new directory ``dest`` (copied where the file
    system cannot link); tantivy's lock files and the build's marker are left out."""
    dest.mkdir(parents=True)
    for path in source.iterdir():
        if not path.is_file() or path.name.endswith(".lock") or path.name == "CATALOG_VERSION":
            continue
        try:
            os.link(path, dest / path.name)
        except OSError:
            shutil.copy2(path, dest / path.name)


class LiveWriter:
    """Writes a tenant's change log into a private copy of the index built for catalog ``version``.

    Args:
        tenant, version, sequence: whose catalog version, and the change-log entry it includes.
        path: the built index's directory (never written).
        roots: where the copy may go, first choice first (the last: on the built index's file system,
            where the copy is hard links).
        config: the tenant's attribute configuration the index was built with.
        products: loads the version's products (``id`` and one column per attribute).
        first_row: the row the first product written gets (the version's row count).

    Raises (constructing): StorageUnavailable (503) loading the products, OSError making the copy,
    tantivy's errors opening it. Not for concurrent use."""

    def __init__(
        self,
        tenant: str,
        version: str,
        sequence: int,
        path: Path,
        roots: list[Path],
        config: AttributeConfiguration,
        products: Callable[[], pl.DataFrame],
        first_row: int,
    ) -> None:
        self.tenant = tenant
        self.path = Path(path)
        self.state = CatalogState(version, sequence, base=products())
        self.next_row = first_row
        self._plan = DocumentPlan(config)
        self._worded = {a.name for a in config.attributes if a.searchable or keyword_field(a)}
        self.copy = self._copy([Path(r) for r in roots])
        self.index = tantivy.Index.open(str(self.copy))
        self.index.register_tokenizer(ANALYZER, build_analyzer())
        self._writer: Any = self.index.writer(heap_size=WRITER_HEAP, num_threads=1)

    @property
    def sequence(self) -> int:
        """The last change-log entry written."""
        return self.state.seq

    def _copy(self, roots: list[Path]) -> Path:
        """The private copy, in the first root with room for it (twice the index: merges write anew)."""
        size = sum(p.stat().st_size for p in self.path.iterdir() if p.is_file())
        name = f"{self.path.name}.{_HOST}-{os.getpid()}-{secrets.token_hex(3)}"
        for i, root in enumerate(roots):
            folder = root / self.tenant
            last = i == len(roots) - 1
            try:
                folder.mkdir(parents=True, exist_ok=True)
                remove_dead_copies(folder)
                if not last and shutil.disk_usage(folder).free < 2 * size:
                    continue
                copy_index(self.path, folder / name)
                return folder / name
            except OSError:
                shutil.rmtree(folder / name, ignore_errors=True)
                if last:
                    raise
        raise OSError("no place for a live index copy")

    def write(self, entries: Sequence[Entry | Head]) -> list[Touched]:
        """Apply ``entries`` (the next ones of the log, in order; those at or before :attr:`sequence`
        are skipped) to the state and the copy, commit, and return the products touched, in row order
        (a product touched twice once, at its last state). Raises tantivy's errors (the copy is then
        unusable)."""
        new = [e for e in entries if e.seq > self.sequence]
        whole = [e for e in new if isinstance(e, Entry)]
        if len(whole) != len(new):
            raise TypeError("a LiveWriter applies whole entries (ChangeLog.after), not heads")
        if not whole:
            return []
        touched: dict[str, None] = {}
        reworded: set[str] = set()
        for entry in whole:
            self.state.apply(entry)
            if entry.bulk is not None:  # whole-product upserts: every one touched and reworded
                ids = entry.bulk.frame["id"].to_list()
                touched.update(dict.fromkeys(ids))
                reworded.update(ids)
            for op in entry.ops:
                touched[op.id] = None
                if op.op == "upsert" or not self._worded.isdisjoint(op.fields):
                    reworded.add(op.id)
        # one delete for them all: each tantivy call gives the GIL back, and taking it again beside a busy
        # search thread costs up to the switch interval (a delete per product halved the apply rate)
        self._writer.delete_documents_by_query(
            tantivy.Query.term_set_query(self.index.schema, "id", list(touched))
        )
        out: list[Touched] = []
        for pid in touched:
            fields = self.state.product(pid)
            if fields is None:
                out.append((pid, -1, None, False))
                continue
            row = self.next_row
            self.next_row += 1
            self._writer.add_document(self._plan.document(row, pid, fields))
            out.append((pid, row, dict(fields), pid in reworded))
        self._writer.commit()
        return out

    def close(self) -> None:
        """Drop the writer and remove the copy (a reader still searching keeps its open files)."""
        self._writer = None
        shutil.rmtree(self.copy, ignore_errors=True)
