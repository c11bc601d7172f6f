"""Per-tenant vector tables one process serves: index, delete and search embeddings.

A tenant's newest complete table of each kind is opened on first use and re-checked at most every
``check_every`` seconds (``AISLE_VECTORS_CHECK_SECONDS``), so a table built by ``aisle vectors build``
(or a new catalog version's) is picked up without a restart. With a bucket, the check also asks it for
the newest published table (:mod:`aisle.vectors.published`) and downloads one this data dir lacks: a
replica with an empty disk serves the vectors built elsewhere and never embeds the catalog itself.
With ``serving_version``, only tables of a catalog version at most the one the process's full-text
index serves are picked, so a replica whose index still serves the previous catalog never pairs it
with the next catalog's vectors.

Writes (:meth:`VectorStore.upsert`, :meth:`VectorStore.delete`) with a bucket are appended to the
tenant's write log there (:mod:`aisle.vectors.writes`) and acknowledged once durable; every store
serving the tenant, this one at once and the others at their next check, applies the log's new entries
in order on top of its table. So a write answered by one replica is served by all within
``check_every`` seconds plus reading the entries. Without a bucket they change the local table, saved
before returning.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from aisle.core.builds import BuildBoard, FileBuildBoard
from aisle.core.builds_resolver import open_build_board
from aisle.core.config import Settings
from aisle.core.errors import AisleError, BadRequest, ErrorCode, Unavailable
from aisle.core.storage import BlobStore
from aisle.core.tenancy import check_tenant_name, tenant_scope
from aisle.vectors.ann import Neighbours
from aisle.vectors.published import download_table, local_manifest, newest_published
from aisle.vectors.table import VectorTable, latest_table, tables_dir
from aisle.vectors.writes import FOLD_AFTER, Delta, WriteLog, apply_delta

log = logging.getLogger("aisle.vectors")


class VectorIndexMissing(Unavailable):
    """No vector table has been built for the tenant (HTTP 503: an operator must build it)."""

    code = ErrorCode.VECTOR_INDEX_MISSING

    def __init__(self, tenant: str, kind: str) -> None:
        command = "aisle vectors build" if kind == "text" else "aisle vectors build-images"
        super().__init__(
            f"tenant '{tenant}' has no {kind} vector index: build it with `{command} {tenant}`",
            details={"tenant": tenant, "kind": kind},
        )


class VectorsBuilding(VectorIndexMissing):
    """No table yet, but a background build of it is queued or running (HTTP 503 ``vectors_building``).

    ``Retry-After`` is the build's ETA clamped to 5..120 s (30 s before it has one).
    """

    code = ErrorCode.VECTORS_BUILDING

    def __init__(self, tenant: str, kind: str, percent: int, eta_s: float | None) -> None:
        Unavailable.__init__(
            self,
            f"the {kind} vectors of tenant '{tenant}' are being built ({percent}% done); "
            "lexical search answers meanwhile",
            retry_after=30 if eta_s is None else int(min(max(eta_s, 5), 120)),
            details={"tenant": tenant, "kind": kind, "percent": percent},
        )


def missing(board: BuildBoard, tenant: str, kind: str) -> Callable[[], VectorIndexMissing]:
    """What to raise for a tenant without a table: ``vectors_building`` while the build board shows one
    queued or running (:mod:`aisle.core.builds`), else ``vector_index_missing``. A factory, so a
    remembered absence raises a fresh error each time (one raised again keeps growing its traceback)."""
    build = board.building(tenant, f"{kind}_vectors")
    if build is None:
        return lambda: VectorIndexMissing(tenant, kind)
    percent, eta_s = build.percent, build.eta_s
    return lambda: VectorsBuilding(tenant, kind, percent, eta_s)


class VectorStore:
    """Vector tables under ``<data_dir>/vectors`` (see :mod:`aisle.vectors.table`).

    Args:
        data_dir: the local cache of tables (may be emptied at any time when ``bucket`` is given).
        check_every: seconds a table (or its absence) is reused before the data dir and the bucket are
            looked at again: the bound on how late a newly published table is served.
        bucket: the object store tables are published to (None: this data dir only).
        board: the build board telling ``vectors_building`` from ``vector_index_missing`` (default:
            the files under ``data_dir``).
        serving_version: the catalog version the process serves for a tenant (its full-text index's),
            or None when unknown; tables of later catalog versions are then left alone.
    """

    def __init__(
        self,
        data_dir: Path,
        check_every: float = 5.0,
        *,
        bucket: BlobStore | None = None,
        board: BuildBoard | None = None,
        serving_version: Callable[[str], str | None] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.check_every = check_every
        self.bucket = bucket
        self.board: BuildBoard = board if board is not None else FileBuildBoard(self.data_dir)
        self.serving_version = serving_version
        self._open: dict[tuple[str, str], tuple[float, VectorTable]] = {}
        # (tenant, kind) found without a table, and when: not looked for again for check_every seconds
        # (a search of a tenant without vectors asks on every request)
        self._missing: dict[tuple[str, str], tuple[float, Callable[[], VectorIndexMissing]]] = {}
        self._guard = threading.Lock()
        # one lock per (tenant, kind): a download of one table does not hold up the checks of others
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self.downloads = 0
        self.fold_after = FOLD_AFTER  # live write-log entries past which a write folds the log

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        bucket: BlobStore,
        *,
        serving_version: Callable[[str], str | None] | None = None,
    ) -> VectorStore:
        """The store of a serving process: ``settings.data_dir`` as the cache of ``bucket``'s tables,
        checked every ``settings.vectors_check_seconds``, with the settings' build board."""
        return cls(
            settings.data_dir,
            settings.vectors_check_seconds,
            bucket=bucket,
            board=open_build_board(settings),
            serving_version=serving_version,
        )

    def entry_count(self) -> int:
        """Vector tables held open (one per tenant and kind)."""
        return len(self._open)

    def known_missing(self, tenant: str, kind: str = "text") -> bool:
        """Whether the last look, less than ``check_every`` seconds ago, found no table of ``kind`` for
        ``tenant``. Reads memory only: never loads, downloads or waits."""
        absent = self._missing.get((tenant, kind))
        return absent is not None and time.monotonic() - absent[0] < self.check_every

    def table(self, tenant: str, kind: str = "text") -> VectorTable:
        """The tenant's newest table of ``kind``.

        Raises:
            VectorIndexMissing (503): nothing built yet; its subclass VectorsBuilding
            (``vectors_building``) while a background build of it runs.
        """
        check_tenant_name(tenant)
        now = time.monotonic()
        entry = self._open.get((tenant, kind))
        if entry is not None and now - entry[0] < self.check_every:
            return entry[1]
        absent = self._missing.get((tenant, kind))
        if absent is not None and now - absent[0] < self.check_every:
            raise absent[1]()
        lock = self._key_lock(tenant, kind)
        # while another request checks (a download can take seconds), serve the loaded table
        if not lock.acquire(blocking=entry is None):
            assert entry is not None
            return entry[1]
        try:
            entry = self._open.get((tenant, kind))
            if entry is not None and time.monotonic() - entry[0] < self.check_every:
                return entry[1]  # checked by the request this one waited for
            path = self._locate(tenant, kind)
            if path is None:
                if entry is not None:  # the table's directory vanished: keep serving what is loaded
                    self._open[(tenant, kind)] = (now, entry[1])
                    return entry[1]
                error = missing(self.board, tenant, kind)
                self._missing[(tenant, kind)] = (now, error)
                raise error()
            self._missing.pop((tenant, kind), None)
            table = entry[1] if entry is not None and entry[1].path == path else self._load(path)
            if self.bucket is not None:
                try:
                    self._catch_up(tenant, kind, table)
                except (AisleError, OSError) as exc:  # the next check retries from where this stopped
                    log.warning("%s vector writes of %s not applied yet: %s", kind, tenant, exc)
            self._open[(tenant, kind)] = (now, table)
            return table
        finally:
            lock.release()

    @staticmethod
    def _load(path: Path) -> VectorTable:
        """A table loaded from ``path``, knowing which logged writes its files supersede."""
        table = VectorTable.load(path)
        manifest = local_manifest(path)
        table.base = table.applied = manifest.writes if manifest is not None else 0
        return table

    def _key_lock(self, tenant: str, kind: str) -> threading.Lock:
        """The lock serialising checks and writes of one (tenant, kind)."""
        with self._guard:
            return self._locks.setdefault((tenant, kind), threading.Lock())

    def _log(self, tenant: str, kind: str) -> WriteLog:
        assert self.bucket is not None
        return WriteLog(tenant_scope(self.bucket, tenant), kind)

    def _catch_up(self, tenant: str, kind: str, table: VectorTable, own: Delta | None = None) -> int:
        """Apply the write log's entries after ``table.applied`` to ``table``, in order (``own``: an
        entry this process just wrote, applied without reading it back); returns how many entries the
        log holds after the table's ``base``. Raises StorageUnavailable (503): what was applied stays.
        """
        writes = self._log(tenant, kind)
        numbers = [n for n in writes.sequence() if n > table.base]
        for seq in numbers:
            if seq <= table.applied:
                continue
            delta = own if own is not None and own.seq == seq else writes.read(seq)
            if delta is not None:  # None: torn, or folded into a later entry: never applied
                apply_delta(table, delta)
            table.applied = seq
        return len(numbers)

    def _locate(self, tenant: str, kind: str) -> Path | None:
        """The newest complete local table to serve, after downloading the bucket's newest published
        one when this data dir lacks it. A bucket failure is logged and the local tables served."""
        upto = None
        if self.serving_version is not None:
            try:
                upto = self.serving_version(tenant)
            except AisleError:  # no catalog or no tenant: any table will do (there is none to pair)
                upto = None
        local = latest_table(self.data_dir, tenant, kind, upto=upto)
        if self.bucket is None:
            return local
        scope = tenant_scope(self.bucket, tenant)
        try:
            remote = newest_published(scope, kind, upto=upto)
            if remote is None:
                return local
            dest = tables_dir(self.data_dir, tenant, kind) / remote.table
            if (dest / "BUILT").exists():
                return local  # this table is here already (downloaded, or built by this machine)
            if local is not None and local.name.rsplit("-", 1)[0] > remote.version:
                return local  # a newer local build, not published yet
            start = time.perf_counter()
            download_table(scope, kind, remote, dest)
            self.downloads += 1
            log.info(
                "%s vectors of %s downloaded from the bucket (%s, %.1f s)",
                kind, tenant, remote.table, time.perf_counter() - start,
            )  # fmt: skip
        except (AisleError, OSError) as exc:  # storage or disk failed: the next check retries
            log.warning("%s vectors of %s not fetched from the bucket: %s", kind, tenant, exc)
            return local
        return latest_table(self.data_dir, tenant, kind, upto=upto)

    def opened(self) -> set[tuple[str, str]]:
        """The ``(tenant, kind)`` pairs whose tables this store holds open."""
        return set(self._open)

    def has(self, tenant: str, kind: str = "text") -> bool:
        """Whether the tenant has a table of ``kind``; opens it (see :meth:`table`) when it does.

        Like a table, an absence is remembered for ``check_every`` seconds (a search asks every time).
        """
        absent = self._missing.get((tenant, kind))
        if absent is not None and time.monotonic() - absent[0] < self.check_every:
            return False
        try:
            self.table(tenant, kind)
        except VectorIndexMissing:
            return False
        return True

    def search(
        self, tenant: str, query: np.ndarray, k: int, *, kind: str = "text", allowed: np.ndarray | None = None
    ) -> tuple[list[str], np.ndarray]:
        """Product ids and cosine scores of the ``k`` nearest to ``query`` (shape (dimension,)).

        ``allowed``: bool mask over the table's keys (see :meth:`allowed_keys`). Raises BadRequest
        (``vector_dimension_mismatch``) for a query of the wrong length, VectorIndexMissing (503).
        """
        table = self.table(tenant, kind)
        query = np.asarray(query, dtype=np.float32).reshape(-1)
        if query.shape[0] != table.dimension:
            raise BadRequest(
                f"the {kind} vectors of '{tenant}' have {table.dimension} dimensions, not {query.shape[0]}",
                code=ErrorCode.VECTOR_DIMENSION_MISMATCH,
            )
        found: Neighbours = table.ann.search(query, k, allowed)
        ids = [table.ids[int(key)] for key in found.keys]
        keep = [i for i, pid in enumerate(ids) if pid is not None]
        return [ids[i] for i in keep], found.scores[keep]  # type: ignore[misc]

    def allowed_keys(self, tenant: str, ids: list[str] | None, *, kind: str = "text") -> np.ndarray | None:
        """Bool mask over the table's keys that is true for the given product ``ids`` (None: all)."""
        if ids is None:
            return None
        table = self.table(tenant, kind)
        mask = np.zeros(len(table.ids), dtype=bool)
        keys = [table.key_of[pid] for pid in ids if pid in table.key_of]
        mask[keys] = True
        return mask

    def upsert(self, tenant: str, ids: list[str], vectors: np.ndarray, *, kind: str = "text") -> int:
        """Index (insert or replace) ``vectors`` (shape (len(ids), dimension)) under ``ids``; returns
        how many. Durable on return: in the bucket's write log (every replica applies it), or without a
        bucket saved in the local table.

        Raises:
            BadRequest: repeated ids (``vector_ids_repeated``), the wrong dimension
                (``vector_dimension_mismatch``), a zero vector (``vector_invalid``).
            VectorIndexMissing (503): no table to write to.
            StorageUnavailable (503): the bucket failed; nothing was written.
        """
        table = self.table(tenant, kind)
        if len(set(ids)) != len(ids):
            raise BadRequest("ids must be distinct", code=ErrorCode.VECTOR_IDS_REPEATED)
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != table.dimension:
            raise BadRequest(
                f"vectors of '{tenant}' ({kind}) must have {table.dimension} dimensions",
                code=ErrorCode.VECTOR_DIMENSION_MISMATCH,
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        if (norms < 1e-12).any():
            raise BadRequest("a zero vector cannot be indexed", code=ErrorCode.VECTOR_INVALID)
        if self.bucket is not None:
            self._write(tenant, kind, table, Delta(upsert=list(ids), vectors=vectors / norms))
            return len(ids)
        count = table.upsert(ids, vectors / norms)
        table.save()
        return count

    def delete(self, tenant: str, ids: list[str], *, kind: str = "text") -> int:
        """Remove ``ids`` from the tenant's table, durably (as :meth:`upsert`); returns how many were
        present (none present: nothing is written).

        Raises VectorIndexMissing (503), StorageUnavailable (503: nothing was written)."""
        table = self.table(tenant, kind)
        if self.bucket is None:
            count = table.delete(ids)
            if count:
                table.save()
            return count
        with self._key_lock(tenant, kind):
            self._catch_up(tenant, kind, table)  # count against every write logged so far
            present = [pid for pid in dict.fromkeys(ids) if pid in table.key_of]
        if present:
            self._write(tenant, kind, table, Delta(delete=present))
        return len(present)

    def _write(self, tenant: str, kind: str, table: VectorTable, delta: Delta) -> None:
        """Append ``delta`` to the log (raises StorageUnavailable: nothing written), then apply it and
        any entry before it here, and fold the log when it grew long. What fails after the append is
        logged: the write is durable, and the next check applies it."""
        with self._key_lock(tenant, kind):
            seq = self._log(tenant, kind).append(delta)
            try:
                live = self._catch_up(tenant, kind, table, own=dataclasses.replace(delta, seq=seq))
                if live > self.fold_after:
                    self._log(tenant, kind).fold(table.base, limit=self.fold_after)
            except (AisleError, OSError) as exc:
                log.warning("%s vector write %d of %s: logged, not applied yet: %s", kind, seq, tenant, exc)
