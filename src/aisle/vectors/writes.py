"""Vector writes through the bucket: an append-only log of deltas that every replica applies.

``PUT`` and ``DELETE /vectors`` do not change one process's table: each write is a *delta* (ids to
upsert with their vectors, ids to delete) appended to the tenant's log in the bucket, and every process
serving the tenant's table applies the deltas it has not applied yet, in order, at its next check
(``AISLE_VECTORS_CHECK_SECONDS``; :class:`~aisle.vectors.store.VectorStore`). Layout in the tenant's
scope, per ``kind`` (``text`` or ``image``)::

    vector-writes/<kind>/data/<token>.f32        the upserted vectors: float32 little-endian, (n, dimension)
    vector-writes/<kind>/log/<seq:012d>.json     written last, create-if-absent: {"seq", "upsert": [ids],
                                                 "delete": [ids], "dimension", "data", "bytes", "digest"}

Ordering: ``seq`` numbers the deltas of a tenant and kind, 1, 2, 3, ... A writer claims the next one by
creating its entry with create-if-absent, so of two concurrent writers exactly one gets each number and
the other takes the next: every replica applies the same deltas in the same order. The entry is written
after its vectors, so an entry names complete data; a payload without an entry (a writer that died, or
a bucket that failed, between the two) is never applied, and a payload whose size or blake2b digest
differs from its entry's (a torn or corrupted object) is skipped with a warning. The write is
acknowledged only once the entry exists.

A published table (:mod:`aisle.vectors.published`) records in its manifest the ``writes`` it supersedes:
the log's head when its build started. A replica applies only deltas after its table's ``writes``; the
ones before are superseded, since the build embedded every product afresh (as a new table always
replaced the writes made to the previous one), and are pruned when the table is published.

The log stays short: past :data:`FOLD_AFTER` live entries, a writer folds them into the newest entry
(its net effect: one upsert or delete per id, so applying it on top of any prefix of the folded entries
gives the same table) and deletes the others. The last entry is never deleted, so numbers only grow.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
from dataclasses import dataclass, field

import numpy as np
import orjson

from aisle.core.errors import AisleError
from aisle.core.storage import BlobNotFound, BlobStore
from aisle.vectors.table import VectorTable

log = logging.getLogger("aisle.vectors")

ROOT = "vector-writes"
FOLD_AFTER = 64
"""Live entries past which a writer folds the log into its newest entry."""
_ENTRY = re.compile(r"^(\d{12})\.json$")


@dataclass(frozen=True)
class Delta:
    """One write: ``upsert`` ids with ``vectors`` (float32, (len(upsert), dimension), unit length),
    then ``delete`` ids. ``seq`` is its place in the log (0 before it is appended)."""

    upsert: list[str] = field(default_factory=list)
    vectors: np.ndarray | None = None
    delete: list[str] = field(default_factory=list)
    seq: int = 0


def apply_delta(table: VectorTable, delta: Delta) -> bool:
    """Apply ``delta`` to the in-memory ``table`` (deletes first, then upserts); False, and nothing
    changed, when its vectors have another dimension than the table's (a table of another encoder).

    Idempotent: applying a delta again leaves the same ids and vectors."""
    shape = (len(delta.upsert), table.dimension)
    if delta.upsert and (delta.vectors is None or delta.vectors.shape != shape):
        log.warning("vector write %d skipped: not of the table's %d dimensions", delta.seq, table.dimension)
        return False
    if delta.delete:
        table.delete(delta.delete)
    if delta.upsert:
        assert delta.vectors is not None
        table.upsert(delta.upsert, delta.vectors)
    return True


def superseded_from_now(scope: BlobStore, kind: str) -> int | None:
    """The log's head when a build starts: the writes its table will supersede (the ones after are
    applied on top of it). None when the bucket fails: publishing the table then reads the head."""
    try:
        return WriteLog(scope, kind).head()
    except AisleError as exc:
        log.warning("the %s vector write log was not read before the build: %s", kind, exc)
        return None


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class WriteLog:
    """The write log of one tenant (``scope``: its bucket scope) and ``kind``.

    Every method raises StorageUnavailable (503) when the bucket fails or times out.
    """

    def __init__(self, scope: BlobStore, kind: str) -> None:
        self.scope = scope
        self.kind = kind
        self.root = f"{ROOT}/{kind}"

    def _entry(self, seq: int) -> str:
        return f"{self.root}/log/{seq:012d}.json"

    def sequence(self) -> list[int]:
        """The numbers of the entries in the log, ascending (one listing)."""
        found = (_ENTRY.match(p.rsplit("/", 1)[-1]) for p in self.scope.list(f"{self.root}/log/"))
        return sorted(int(m.group(1)) for m in found if m)

    def head(self) -> int:
        """The newest entry's number; 0 for an empty log."""
        numbers = self.sequence()
        return numbers[-1] if numbers else 0

    def append(self, delta: Delta) -> int:
        """Write ``delta`` (vectors first, its entry last) under the next free number; returns it.

        Once this returns the write is durable and every replica will apply it; when it raises
        nothing was logged, or (a timeout while the entry was being created) the whole delta was."""
        doc: dict[str, object] = {"upsert": delta.upsert, "delete": delta.delete, "data": None}
        if delta.upsert:
            assert delta.vectors is not None
            doc |= self._put_vectors(delta.vectors)
        seq = self.head() + 1
        while not self.scope.put_if_absent(self._entry(seq), orjson.dumps(doc | {"seq": seq})):
            seq += 1  # another writer took it: the next number
        return seq

    def _put_vectors(self, vectors: np.ndarray) -> dict[str, object]:
        """Upload ``vectors`` under a fresh name; returns the entry's fields that name and check them."""
        data = np.ascontiguousarray(vectors, dtype="<f4").tobytes()
        name = f"{self.root}/data/{secrets.token_hex(12)}.f32"
        self.scope.put(name, data)
        return {"data": name, "dimension": int(vectors.shape[1]), "bytes": len(data), "digest": _digest(data)}

    def read(self, seq: int) -> Delta | None:
        """Entry ``seq``, or None when it cannot be applied: gone (folded into a later entry or pruned),
        unreadable, or its vectors torn (size or digest not the entry's)."""
        for _ in range(2):  # a fold may replace the entry between reading it and its data
            try:
                doc = orjson.loads(self.scope.get(self._entry(seq)))
            except BlobNotFound:
                return None
            except orjson.JSONDecodeError:
                log.warning("vector write %d of %s skipped: unreadable entry", seq, self.root)
                return None
            try:
                return _decode(self.scope, seq, doc)
            except BlobNotFound:
                continue
            except (KeyError, TypeError, ValueError) as exc:
                log.warning("vector write %d of %s skipped: %s", seq, self.root, exc)
                return None
        return None

    def prune(self, upto: int) -> None:
        """Delete the entries numbered at most ``upto`` (superseded by a published table), and their
        vectors; the newest entry is kept, so numbers keep growing."""
        numbers = self.sequence()
        self._remove([n for n in numbers[:-1] if n <= upto])

    def fold(self, after: int, *, limit: int = FOLD_AFTER) -> bool:
        """Fold the entries after ``after`` into the newest one when there are more than ``limit``;
        True when it folded.

        Safe beside readers and writers: the newest entry is replaced whole by the net effect of all
        of them (so a reader that applied some already gets the same table), then the others go. A
        concurrent fold or a vanished entry makes this one give up (False)."""
        numbers = [n for n in self.sequence() if n > after]
        if len(numbers) <= limit:
            return False
        state: dict[str, np.ndarray | None] = {}
        for seq in numbers:
            delta = self.read(seq)
            if delta is None:
                if not self.scope.exists(self._entry(seq)):
                    return False  # another writer is folding: its newest entry holds this one
                continue  # torn: never applied, so not folded either
            for pid in delta.delete:
                state[pid] = None
            for i, pid in enumerate(delta.upsert):
                state[pid] = delta.vectors[i]  # type: ignore[index]
        upsert = [pid for pid, row in state.items() if row is not None]
        dims = {state[pid].shape[0] for pid in upsert}  # type: ignore[union-attr]
        if len(dims) > 1:
            return False
        vectors = np.stack([state[pid] for pid in upsert]) if upsert else None  # type: ignore[misc]
        head = numbers[-1]
        old = orjson.loads(self.scope.get(self._entry(head)))
        net = Delta(upsert, vectors, [pid for pid, row in state.items() if row is None])
        doc: dict[str, object] = {"seq": head, "upsert": net.upsert, "delete": net.delete, "data": None,
                                  "folds": [numbers[0], head]}  # fmt: skip
        if vectors is not None:
            doc |= self._put_vectors(vectors)
        self.scope.put(self._entry(head), orjson.dumps(doc))
        self._remove(numbers[:-1])
        if old.get("data"):
            self.scope.delete(str(old["data"]))
        return True

    def _remove(self, numbers: list[int]) -> None:
        """Delete entries (first) and then their vectors: a reader never finds an entry without data
        it did not expect to be gone."""
        data = []
        for seq in numbers:
            try:
                doc = orjson.loads(self.scope.get(self._entry(seq)))
            except (BlobNotFound, orjson.JSONDecodeError):
                doc = {}
            self.scope.delete(self._entry(seq))
            if isinstance(doc, dict) and doc.get("data"):
                data.append(str(doc["data"]))
        for name in data:
            self.scope.delete(name)


def _decode(scope: BlobStore, seq: int, doc: dict[str, object]) -> Delta | None:
    upsert = [str(i) for i in doc["upsert"]]  # type: ignore[attr-defined]
    delete = [str(i) for i in doc["delete"]]  # type: ignore[attr-defined]
    vectors = None
    if upsert:
        data = scope.get(str(doc["data"]))
        dimension = int(doc["dimension"])  # type: ignore[call-overload]
        expected = 4 * dimension * len(upsert)
        if len(data) != doc["bytes"] or len(data) != expected or _digest(data) != doc["digest"]:
            log.warning("vector write %d skipped: its vectors are torn (%d bytes)", seq, len(data))
            return None
        vectors = np.frombuffer(data, dtype="<f4").reshape(len(upsert), dimension).astype(np.float32)
    return Delta(upsert, vectors, delete, seq)
