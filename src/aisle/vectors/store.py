"""Per-tenant vector tables one process serves: index, delete and search embeddings.

A tenant's newest complete table of each kind is opened on first use and re-checked at most every
``check_every`` seconds, so a table built by ``aisle vectors build`` (or a new catalog version's) is
picked up without a restart. Writes go to the open table and are persisted before returning.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from aisle.core.builds import BuildBoard
from aisle.core.errors import BadRequest, ErrorCode, Unavailable
from aisle.core.tenancy import check_tenant_name
from aisle.vectors.ann import Neighbours
from aisle.vectors.table import VectorTable, latest_table


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


def missing(data_dir: Path, tenant: str, kind: str) -> Callable[[], VectorIndexMissing]:
    """What to raise for a tenant without a table: ``vectors_building`` while the build board shows one
    queued or running (:mod:`aisle.core.builds`), else ``vector_index_missing``. A factory, so a
    remembered absence raises a fresh error each time (one raised again keeps growing its traceback)."""
    build = BuildBoard(data_dir).building(tenant, f"{kind}_vectors")
    if build is None:
        return lambda: VectorIndexMissing(tenant, kind)
    percent, eta_s = build.percent, build.eta_s
    return lambda: VectorsBuilding(tenant, kind, percent, eta_s)


class VectorStore:
    """Vector tables under ``<data_dir>/vectors`` (see :mod:`aisle.vectors.table`)."""

    def __init__(self, data_dir: Path, check_every: float = 5.0) -> None:
        self.data_dir = Path(data_dir)
        self.check_every = check_every
        self._open: dict[tuple[str, str], tuple[float, VectorTable]] = {}
        # (tenant, kind) found without a table, and when: not looked for again for check_every seconds
        # (a search of a tenant without vectors asks on every request)
        self._missing: dict[tuple[str, str], tuple[float, Callable[[], VectorIndexMissing]]] = {}
        self._guard = threading.Lock()

    def entry_count(self) -> int:
        """Vector tables held open (one per tenant and kind)."""
        return len(self._open)

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
            path = latest_table(self.data_dir, tenant, kind)
            if path is None:
                if entry is not None:  # the table's directory vanished: keep serving what is loaded
                    return entry[1]
                error = missing(self.data_dir, tenant, kind)
                self._missing[(tenant, kind)] = (now, error)
                raise error()
            self._missing.pop((tenant, kind), None)
            table = entry[1] if entry is not None and entry[1].path == path else VectorTable.load(path)
            self._open[(tenant, kind)] = (now, table)
            return table

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
