"""Per-tenant vector tables one process serves: index, delete and search embeddings.

A tenant's newest complete table of each kind is opened on first use and re-checked at most every
``check_every`` seconds (``AISLE_VECTORS_CHECK_SECONDS``), so a table built by ``aisle vectors build``
(or a new catalog version's) is picked up without a restart. With a bucket, the check also asks it for
the newest published table (:mod:`aisle.vectors.published`) and downloads one this data dir lacks: a
replica with an empty disk serves the vectors built elsewhere and never embeds the catalog itself.
With ``serving_version``, only tables of a catalog version at most the one the process's full-text
index serves are picked, so a replica whose index still serves the previous catalog never pairs it
with the next catalog's vectors. Writes go to the open table and are persisted before returning
(this replica's data dir only: see docs/operations.md).
"""

from __future__ import annotations

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
from aisle.vectors.published import download_table, newest_published
from aisle.vectors.table import VectorTable, latest_table, tables_dir

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
        with self._guard:
            lock = self._locks.setdefault((tenant, kind), threading.Lock())
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
            table = entry[1] if entry is not None and entry[1].path == path else VectorTable.load(path)
            self._open[(tenant, kind)] = (now, table)
            return table
        finally:
            lock.release()

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
        """Index (insert or replace) ``vectors`` under ``ids`` and persist. Returns how many."""
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
        count = table.upsert(ids, vectors / norms)
        table.save()
        return count

    def delete(self, tenant: str, ids: list[str], *, kind: str = "text") -> int:
        """Remove ``ids`` from the tenant's table and persist. Returns how many were present."""
        table = self.table(tenant, kind)
        count = table.delete(ids)
        if count:
            table.save()
        return count
