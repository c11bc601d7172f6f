"""usearch (HNSW) backend of :class:`aisle.vectors.ann.AnnIndex`, with a dense copy for filtered search.

Keys are small non-negative integers (row numbers of a tenant's vector table), so the vectors are also
kept in a dense matrix indexed by key: exact search over an allowed subset is one matrix-vector product
over the rows that pass, and nothing has to be read back from the graph.

On disk (one directory): ``hnsw.usearch`` (the graph), ``vectors.npy`` (shape (capacity, ndim)),
``present.npy`` (bool, shape (capacity,)).

Both hold the vectors in half precision (IEEE 754 binary16, :data:`STORED`; issue 32): half the memory of
float32, which is what a hybrid tenant's memory mostly is. Every vector handed out (:meth:`rows`,
:meth:`vectors_of`) and every score is float32, computed from the stored halves; on MiniLM's unit
vectors a cosine moves by at most 6e-5 (fashion's 44k products, 300 queries), and usearch's graph over
half-precision vectors found as many of the exact 20 nearest (96%) as over float32, in 0.6x the time.
An index written before (float32 files) loads and works as written.

:meth:`UsearchAnnIndex.load` memory-maps the graph and the matrix instead of reading them (issue 32): the
search workers of one machine then share one copy in the page cache instead of holding one each (the
matrix and the graph are most of a hybrid tenant's memory: for 44k products at 384 dimensions about 75 MB,
150 MB in float32). The matrix is mapped copy-on-write, so a change touches only this process's copy of
the pages it writes; the graph, which usearch cannot change while mapped, is copied into memory at the
first change. :meth:`UsearchAnnIndex.save` writes each file beside its place and renames it into place, so
a process that mapped the old file keeps reading it (writing in place would truncate a mapped file).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numkong
import numpy as np
import onnxruntime  # noqa: F401  # must load before usearch: the reverse order segfaults (usearch 2.26)
from usearch.index import Index

from aisle.vectors.ann import Neighbours, exact_search

# Answer exactly when at most this many rows pass the filter (about 1 ms of BLAS at 384 dimensions)...
FLAT_ROWS = 4_000
# ...or when fewer than this share of rows passes (the graph would need too deep an over-fetch).
FLAT_SHARE = 0.15
MAX_OVERFETCH = 2_000
#: how the vectors are stored, in the graph and in the matrix (see the module docstring)
STORED = np.float16
SMALL_GRAPH = 60_000
"""Up to this many vectors a search explores 64 candidates (the demo tenants: 44-55k)."""
MAX_EXPANSION = 1024
ONE_THREAD_ROWS = 100_000
"""Up to this many vectors the graph is built on one thread, so the same vectors give the same graph and
a search the same neighbours (issue 43's stable order: two threads inserting concurrently link the nodes
in another order each run; at 5,000 Home Depot vectors, 9 of 200 searches' top 20 differed between two
builds). Home Depot's 54,667 took 32.5 s on one thread and 30.9 s on two on a busy 2-core machine; a
bigger table is built on every core, where the build's time matters more."""


def search_expansion(rows: int) -> int:
    """HNSW's ``ef`` at search time for a graph of ``rows`` vectors: 64 up to :data:`SMALL_GRAPH`, then
    doubled each time the rows double, at most :data:`MAX_EXPANSION`.

    Measured (issue 42, ``bench_scale``'s generated catalog, its queries through the static query
    encoder, recall@20 against exact search): 100k vectors, ef 64 / 96 / 128 / 192: 0.935 / 0.952 /
    0.962 / 0.975; 1M vectors, ef 64 / 128 / 256 / 512 / 1024: 0.790 / 0.852 / 0.899 / 0.921 / 0.949,
    a search taking 2-4 ms at 1024 on a loaded 2-core machine. Fashion (44k) had 0.96 at 64.
    """
    ef = 64
    while rows > SMALL_GRAPH * (ef // 64) and ef < MAX_EXPANSION:
        ef *= 2
    return ef


class UsearchAnnIndex:
    """HNSW over inner product (``metric='ip'``; cosine for unit vectors), connectivity 16, ef 128 when
    adding, :func:`search_expansion` when searching."""

    def __init__(self, ndim: int, *, threads: int = 1) -> None:
        self.ndim = ndim
        self.threads = threads
        self._index = Index(
            ndim=ndim, metric="ip", dtype="f16", connectivity=16, expansion_add=128, expansion_search=64
        )
        self._matrix = np.zeros((0, ndim), dtype=STORED)
        self._present = np.zeros(0, dtype=bool)
        self._mapped = False  # the graph is a read-only view of its file (see :meth:`_own_graph`)

    def _own_graph(self) -> None:
        """Copy a mapped graph into memory before changing it (usearch refuses to add to a view and
        crashes on a removal from one)."""
        if self._mapped:
            self._index = self._index.copy()
            self._mapped = False

    def __len__(self) -> int:
        return int(self._present.sum())

    @property
    def capacity(self) -> int:
        return int(self._present.shape[0])

    def _grow(self, size: int) -> None:
        if size <= self.capacity:
            return
        matrix = np.zeros((size, self.ndim), dtype=self._matrix.dtype)
        matrix[: self.capacity] = self._matrix
        present = np.zeros(size, dtype=bool)
        present[: self.capacity] = self._present
        self._matrix, self._present = matrix, present

    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        """Insert or replace; ``vectors`` float32 (n, ndim), ``keys`` int64 (n,) non-negative."""
        keys = np.asarray(keys, dtype=np.int64)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.shape != (keys.shape[0], self.ndim):
            raise ValueError(f"vectors must have shape ({keys.shape[0]}, {self.ndim}), got {vectors.shape}")
        if keys.size == 0:
            return
        if keys.min() < 0:
            raise ValueError("keys must be non-negative")
        self._own_graph()
        self._grow(int(keys.max()) + 1)
        replaced = keys[self._present[keys]]
        if replaced.size:
            self._index.remove(replaced)
        self._matrix[keys] = vectors
        self._present[keys] = True
        self._index.add(keys, vectors, threads=self.threads)

    def remove(self, keys: np.ndarray) -> None:
        keys = np.asarray(keys, dtype=np.int64)
        keys = keys[(keys >= 0) & (keys < self.capacity)]
        keys = keys[self._present[keys]]
        if keys.size:
            self._own_graph()
            self._index.remove(keys)
            self._present[keys] = False
            self._matrix[keys] = 0.0

    def vectors_of(self, keys: np.ndarray) -> np.ndarray:
        keys = np.asarray(keys, dtype=np.int64)
        bad = keys[(keys < 0) | (keys >= self.capacity)]
        if bad.size or not self._present[keys].all():
            raise KeyError("unknown key(s)")
        return self.rows(keys)

    def rows(self, keys: np.ndarray) -> np.ndarray:
        """Stored vectors of present ``keys`` without checks (zeros for a deleted key): (n, ndim) float32.

        Half precision is widened by numkong (usearch's own SIMD kernels, F16C/AVX-512): numpy's
        ``astype`` from float16 took 840 us for the 120 rows a hybrid search reads, numkong 44 us, to
        the same values (issue 43's profile: most of the hybrid stage)."""
        picked = self._matrix[np.asarray(keys, dtype=np.int64)]
        if picked.dtype == np.float16:
            return np.asarray(numkong.astype(picked, "float32"))
        return picked.astype(np.float32, copy=False)

    def search(
        self, query: np.ndarray, k: int, allowed: np.ndarray | None = None, *, expansion: int | None = None
    ) -> Neighbours:
        """Top ``k`` by cosine; ``allowed`` a bool mask over keys (shorter masks: missing keys excluded);
        ``expansion`` caps the graph search's ``ef`` below :func:`search_expansion` (never under ``k``)."""
        query = np.asarray(query, dtype=np.float32).reshape(-1)
        total = len(self)
        if k <= 0 or total == 0:
            return Neighbours(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
        if allowed is None:
            return self._graph(query, min(k, total), expansion)
        mask = np.zeros(self.capacity, dtype=bool)
        n = min(self.capacity, allowed.shape[0])
        mask[:n] = allowed[:n] & self._present[:n]
        passing = int(mask.sum())
        if passing <= FLAT_ROWS or passing < FLAT_SHARE * total:
            return self._exact(query, k, mask)
        fetch = min(total, MAX_OVERFETCH, math.ceil(k * total / passing * 1.5) + 16)
        found = self._graph(query, fetch, expansion)
        keep = mask[found.keys]
        if int(keep.sum()) >= min(k, passing):
            return Neighbours(found.keys[keep][:k], found.scores[keep][:k])
        return self._exact(query, k, mask)

    def _graph(self, query: np.ndarray, k: int, expansion: int | None = None) -> Neighbours:
        """The graph's ``k`` nearest, scored from the matrix as exact search scores them (the graph's
        own distances are over its stored precision), best first."""
        ef = search_expansion(self.capacity)
        if expansion is not None:
            ef = max(k, min(ef, expansion))
        if self._index.expansion_search != ef:
            self._index.expansion_search = ef  # type: ignore[misc]  # usearch has the setter
        keys = np.asarray(self._index.search(query, k, threads=self.threads).keys, dtype=np.int64)
        scores = self.rows(keys) @ query
        order = np.argsort(-scores, kind="stable")
        return Neighbours(keys[order], scores[order].astype(np.float32, copy=False))

    def _exact(self, query: np.ndarray, k: int, mask: np.ndarray) -> Neighbours:
        rows = np.flatnonzero(mask)
        return exact_search(self.rows(rows), rows, query, k)

    def save(self, path: Path) -> None:
        """Write the three files into directory ``path`` (created), each renamed into place."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        self._index.save(str(path / "hnsw.usearch.tmp"))
        os.replace(path / "hnsw.usearch.tmp", path / "hnsw.usearch")
        for name, array in (("vectors.npy", self._matrix), ("present.npy", self._present)):
            with (path / f"{name}.tmp").open("wb") as fh:
                np.save(fh, array)
            os.replace(path / f"{name}.tmp", path / name)

    @classmethod
    def load(cls, path: Path, *, threads: int = 1) -> UsearchAnnIndex:
        """Map an index written by :meth:`save` (see the module: shared by the processes mapping it,
        copied on change). Raises FileNotFoundError when a file is missing."""
        path = Path(path)
        # a plain ndarray over the mapping: np.memmap's own methods cost ~13 us on each rows-and-dot
        matrix = np.asarray(np.load(path / "vectors.npy", mmap_mode="c"))
        self = cls(int(matrix.shape[1]), threads=threads)
        self._matrix = matrix
        self._present = np.load(path / "present.npy")
        if not (path / "hnsw.usearch").exists():
            raise FileNotFoundError(path / "hnsw.usearch")
        graph = Index.restore(str(path / "hnsw.usearch"), view=True)  # in the precision it was written
        if graph is None:
            raise FileNotFoundError(path / "hnsw.usearch")
        graph.expansion_search = self._index.expansion_search  # type: ignore[misc]  # usearch has the setter
        self._index = graph
        self._mapped = True
        return self

    @classmethod
    def build(cls, vectors: np.ndarray, *, threads: int | None = None) -> UsearchAnnIndex:
        """An index of ``vectors`` (float32, (n, ndim)) under keys 0..n-1; ``threads`` None: one up to
        :data:`ONE_THREAD_ROWS` vectors (the same graph every build), else up to two."""
        if threads is None:
            threads = 1 if vectors.shape[0] <= ONE_THREAD_ROWS else min(2, os.cpu_count() or 1)
        self = cls(int(vectors.shape[1]), threads=threads)
        self.add(np.arange(vectors.shape[0], dtype=np.int64), vectors)
        self.threads = 1
        return self
