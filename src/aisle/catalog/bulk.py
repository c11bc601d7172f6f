"""Bulk entries: an import's upserts kept as columns, one Parquet file beside its change-log entry.

An import of N products written as N operations of a JSON entry cost the writer a Python object per
product at every step (deciding, encoding, applying): 1.6 s of which 1.5 s was per-row work for Home
Depot's 54,667 rows, where reading and mapping the file took 0.08 s (issue 41). A *bulk* holds those
whole-product upserts as the typed frame the import mapped (``id`` then one column per field, ids
unique) and their one update time; the entry's JSON names the file::

    catalog-changes/log/<seq:012d>.json      {"seq", "at", "ops": [...], "bulk": {"path", "time", "rows"}}
    catalog-changes/bulk/<seq:012d>-<token>.parquet

The bulk's upserts come first in the entry, then its ``ops`` (an import's ``full`` deletes). The file is
written before the entry is created, so an acknowledged entry always finds it; a file whose entry lost
its number to another writer (or whose writer died) is left for :func:`prune_files`. Readers that work
product by product expand the bulk into the same :class:`~aisle.catalog.changes.Op` s a JSON entry holds
(:meth:`aisle.catalog.changes.upserts`); the writer's state and compaction absorb the frame as columns
(:meth:`aisle.catalog.state.CatalogState.absorb`).
"""

from __future__ import annotations

import io
import re
import secrets
from dataclasses import dataclass
from typing import Any

import polars as pl

from aisle.core.storage import BlobNotFound, BlobStore

ROOT = "catalog-changes/bulk"
_FILE = re.compile(r"^(\d{12})-[0-9a-f]+\.parquet$")


@dataclass(frozen=True)
class Bulk:
    """Whole-product upserts at one ``time`` (microseconds since the epoch): ``frame`` has ``id``
    (Utf8, unique) then one typed column per field, a row per product."""

    frame: pl.DataFrame
    time: int

    def __len__(self) -> int:
        return self.frame.height


def write_file(scope: BlobStore, seq: int, bulk: Bulk) -> dict[str, Any]:
    """Write ``bulk``'s file for entry ``seq`` (a fresh name: a lost race never overwrites a file an
    entry names); returns the entry's ``bulk`` field. Raises StorageUnavailable (503)."""
    path = f"{ROOT}/{seq:012d}-{secrets.token_hex(6)}.parquet"
    buffer = io.BytesIO()
    bulk.frame.write_parquet(buffer, compression="lz4", statistics=False)
    scope.put(path, buffer.getvalue())
    return {"path": path, "time": bulk.time, "rows": bulk.frame.height}


def read_file(scope: BlobStore, doc: dict[str, Any]) -> Bulk | None:
    """The bulk an entry's ``bulk`` field names; None when its file is gone (pruned meanwhile).
    Raises StorageUnavailable (503)."""
    try:
        data = scope.get(str(doc["path"]))
    except BlobNotFound:
        return None
    return Bulk(pl.read_parquet(io.BytesIO(data)), int(doc["time"]))


def delete_file(scope: BlobStore, doc: dict[str, Any]) -> None:
    """Remove a file no entry will name (its entry lost the race for its number)."""
    scope.delete(str(doc["path"]))


def prune_files(scope: BlobStore, upto: int, keep: int) -> int:
    """Delete the bulk files written for entries numbered at most ``upto``, but those of entry ``keep``
    (the newest, which the log keeps); returns how many went."""
    gone = 0
    for path in list(scope.list(f"{ROOT}/")):
        found = _FILE.match(path.rsplit("/", 1)[-1])
        if found and int(found.group(1)) <= upto and int(found.group(1)) != keep:
            scope.delete(path)
            gone += 1
    return gone
