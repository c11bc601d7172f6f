"""Approximate nearest-neighbour search over L2-normalised vectors, with filters.

:class:`AnnIndex` is the role; :class:`aisle.vectors.ann_usearch.UsearchAnnIndex` the backend (HNSW,
Malkov & Yashunin 2018, through usearch). Scores are inner products, i.e. cosine similarities for unit
vectors, higher is better.

Filters are an ``allowed`` boolean mask over keys (``allowed[key]`` true when the product may be
returned): in-category, in-stock or any request filter becomes such a mask. A selective filter is
answered exactly over the allowed rows (cheaper and exact when few rows pass); a broad one by
over-fetching from the graph and dropping what does not pass, falling back to exact search when too few
survive. This is the usual pre-/post-filter split (e.g. Weaviate's "flat search cutoff").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class Neighbours:
    """``keys`` (int64, shape (k,)) and their ``scores`` (float32 cosine, shape (k,)), best first."""

    keys: np.ndarray
    scores: np.ndarray

    def __len__(self) -> int:
        return int(self.keys.shape[0])


class AnnIndex(Protocol):
    """Vectors under integer keys; nearest-neighbour search with an optional allowed-key mask."""

    ndim: int

    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        """Insert or replace ``vectors`` (float32, shape (n, ndim), unit length) under ``keys`` (n,)."""
        ...

    def remove(self, keys: np.ndarray) -> None:
        """Drop ``keys``; unknown keys are ignored."""
        ...

    def search(
        self, query: np.ndarray, k: int, allowed: np.ndarray | None = None, *, expansion: int | None = None
    ) -> Neighbours:
        """The ``k`` nearest keys to ``query`` (shape (ndim,)) among those with ``allowed[key]`` true;
        ``expansion`` caps a graph search's breadth (HNSW's ``ef``; None: the index's own)."""
        ...

    def vectors_of(self, keys: np.ndarray) -> np.ndarray:
        """Stored vectors of ``keys`` (float32, shape (n, ndim)); raises KeyError for an unknown key."""
        ...

    def __len__(self) -> int: ...

    def save(self, path: Path) -> None: ...


def exact_search(matrix: np.ndarray, keys: np.ndarray, query: np.ndarray, k: int) -> Neighbours:
    """Brute-force top-``k`` inner products of ``query`` against ``matrix`` rows (labelled ``keys``)."""
    if matrix.shape[0] == 0 or k <= 0:
        return Neighbours(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
    scores = matrix @ query.astype(matrix.dtype, copy=False)
    k = min(k, scores.shape[0])
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    return Neighbours(keys[top].astype(np.int64), scores[top].astype(np.float32))
