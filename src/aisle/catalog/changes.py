"""The catalog change log: every acknowledged product write, numbered, in the tenant's bucket scope.

A product write (``PUT``/``PATCH``/``DELETE /products/{id}``, a batch, an import) is one *entry*: the
operations it applied, each with the product id, its time and its fields. Layout in the tenant's scope::

    catalog-changes/log/<seq:012d>.json     create-if-absent: {"seq", "at", "ops": [{"op": "upsert" |
                                            "patch" | "delete", "id", "time", "fields"?}, ...]}
    catalog-changes/lease/<n:012d>.json     who compacts now: {"owner", "expires", "released"}
    catalog-changes/bulk/<seq>-<token>.parquet  an import's upserts as columns (:mod:`aisle.catalog.bulk`),
                                            named by its entry's ``bulk`` field

Ordering: ``seq`` numbers a tenant's entries 1, 2, 3, ... with no gap. A writer takes the number after
the newest entry it has read by creating that entry with create-if-absent, so of two concurrent writers
exactly one gets each number; the other reads the entry that beat it, decides its operations again
against it (staleness, a deleted product) and tries the next number. Each entry's operations were
therefore decided against exactly the entries before it, and every reader applies them in order as they
stand (:mod:`aisle.catalog.state`). The write is acknowledged only once its entry exists: a put that
fails or times out acknowledges nothing (the caller gets 503 and may retry; a retried write with its
``updateTime`` is at worst reported ``stale``).

The tenant's catalog *sequence* is the log's head. Reading "the entries after ``n``" is one GET per
entry, and one GET that finds nothing when there is none: no listing (:meth:`ChangeLog.after`), so a
search process can follow the log cheaply.

Compaction (:mod:`aisle.catalog.compaction`) folds the log into a catalog version whose pointer records
the sequence it includes (``catalog/current.json`` ``sequence``), then prunes the entries the previous
version included (one version behind, so a reader that is following the log meanwhile still finds
its entries). The newest entry is never pruned, so numbers only grow. A reader that finds a gap (its
next entry pruned) loads the current version again.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import orjson

from aisle.catalog.bulk import Bulk, delete_file, prune_files, read_file, write_file
from aisle.core.storage import BlobNotFound, BlobStore

log = logging.getLogger("aisle.catalog")

ROOT = "catalog-changes"
_ENTRY = re.compile(r"^(\d{12})\.json$")
OpKind = Literal["upsert", "patch", "delete"]


@dataclass(frozen=True)
class Op:
    """One product operation: ``upsert`` (``fields``: the whole product), ``patch`` (``fields``: only
    the fields that change; None removes one) or ``delete``. ``time``: microseconds since the epoch."""

    op: OpKind
    id: str
    time: int
    fields: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"op": self.op, "id": self.id, "time": self.time}
        if self.op != "delete":
            doc["fields"] = self.fields
        return doc

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Op:
        return cls(doc["op"], str(doc["id"]), int(doc["time"]), dict(doc.get("fields") or {}))


def upserts(bulk: Bulk) -> list[Op]:
    """``bulk``'s upserts one by one, as a JSON entry holds them (every field of the frame, None kept)."""
    frame = bulk.frame
    names = [c for c in frame.columns if c != "id"]
    columns = [frame[c].to_list() for c in names]
    return [
        Op("upsert", pid, bulk.time, dict(zip(names, values, strict=True)))
        for pid, *values in zip(frame["id"].to_list(), *columns, strict=True)
    ]


@dataclass(frozen=True)
class Entry:
    """One acknowledged write: its number, its ``bulk`` upserts (an import's, as columns) and then its
    ``ops``, in order; ``at``: when it was written (ISO 8601, as the log stores it)."""

    seq: int
    ops: list[Op]
    bulk: Bulk | None = None
    at: str = ""

    @property
    def operations(self) -> list[Op]:
        """Every operation one by one, the bulk's first (expanded: a Python object per product)."""
        return (upserts(self.bulk) if self.bulk is not None else []) + self.ops

    def __len__(self) -> int:
        return len(self.ops) + (len(self.bulk) if self.bulk is not None else 0)

    @property
    def bulk_rows(self) -> int:
        """Products in the entry's bulk (0: none)."""
        return len(self.bulk) if self.bulk is not None else 0


@dataclass(frozen=True)
class Head:
    """An entry as a follower that leaves the applying to another process reads it: its number and
    its bulk's product count, without its operations or its bulk's file (:meth:`ChangeLog.heads`)."""

    seq: int
    bulk_rows: int = 0


class ChangeLog:
    """The change log of one tenant (``scope``: its bucket scope).

    Every method raises StorageUnavailable (503) when the bucket fails or times out.
    """

    def __init__(self, scope: BlobStore) -> None:
        self.scope = scope

    @staticmethod
    def _entry(seq: int) -> str:
        return f"{ROOT}/log/{seq:012d}.json"

    def sequence(self) -> list[int]:
        """The numbers of the entries in the log, ascending (one listing)."""
        found = (_ENTRY.match(p.rsplit("/", 1)[-1]) for p in self.scope.list(f"{ROOT}/log/"))
        return sorted(int(m.group(1)) for m in found if m)

    def head(self) -> int:
        """The newest entry's number (the tenant's catalog sequence); 0 for an empty log."""
        numbers = self.sequence()
        return numbers[-1] if numbers else 0

    def create(self, seq: int, ops: list[Op], bulk: Bulk | None = None) -> bool:
        """Create entry ``seq`` holding ``bulk`` (its file written first) then ``ops``; False when
        another writer has the number already (the bulk's file is then removed).

        Once this returns True the write is durable; when it raises (StorageUnavailable) nothing is
        acknowledged."""
        at = datetime.now(UTC).isoformat()
        doc: dict[str, Any] = {"seq": seq, "at": at, "ops": [op.to_json() for op in ops]}
        if bulk is not None:
            doc["bulk"] = write_file(self.scope, seq, bulk)
        created = self.scope.put_if_absent(self._entry(seq), orjson.dumps(doc))
        if not created and bulk is not None:
            delete_file(self.scope, doc["bulk"])
        return created

    def read(self, seq: int) -> Entry | None:
        """Entry ``seq``, or None when there is none (not written yet, or pruned, its bulk's file with
        it)."""
        try:
            doc = orjson.loads(self.scope.get(self._entry(seq)))
        except BlobNotFound:
            return None
        bulk = None
        if doc.get("bulk"):
            bulk = read_file(self.scope, doc["bulk"])
            if bulk is None:
                return None
        ops = [Op.from_json(op) for op in doc["ops"]]
        return Entry(int(doc["seq"]), ops, bulk, str(doc.get("at") or ""))

    def after(self, seq: int) -> list[Entry]:
        """The entries after ``seq``, in order, up to the head: one GET each, and one that finds none."""
        found: list[Entry] = []
        while (entry := self.read(seq + len(found) + 1)) is not None:
            found.append(entry)
        return found

    def heads(self, seq: int) -> list[Head]:
        """The entries after ``seq`` as :class:`Head` s, in order, up to the head (one GET each, and one
        that finds none; neither the operations parsed nor a bulk's file read)."""
        found: list[Head] = []
        while True:
            try:
                doc = orjson.loads(self.scope.get(self._entry(seq + len(found) + 1)))
            except BlobNotFound:
                return found
            found.append(Head(int(doc["seq"]), int((doc.get("bulk") or {}).get("rows") or 0)))

    def exists(self, seq: int) -> bool:
        """Whether entry ``seq`` is in the log."""
        return self.scope.exists(self._entry(seq))

    def prune(self, upto: int) -> int:
        """Delete the entries numbered at most ``upto`` (folded into a catalog version), keeping the
        newest; returns how many went."""
        numbers = self.sequence()
        gone = [n for n in numbers[:-1] if n <= upto]
        for seq in gone:
            self.scope.delete(self._entry(seq))
        if numbers:  # then their bulk files (and any an entry never named): see aisle.catalog.bulk
            prune_files(self.scope, upto, keep=numbers[-1])
        return len(gone)


def entries_total(entries: list[Entry]) -> int:
    """Operations in ``entries`` (a bulk's products included)."""
    return sum(len(e) for e in entries)
