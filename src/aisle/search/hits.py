"""What retrieval produces: matching products as catalog rows, with their scores and signals."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(slots=True)
class Hit:
    """One matching product: catalog row number and relevance score (or sort key)."""

    ord: int
    score: float


@dataclass(slots=True)
class Candidates:
    """The candidate list a learned ranker reorders: catalog rows with their retrieval signals.

    ``ords`` (n,) int64 catalog rows; ``lexical`` (n,) float32 score of the lexical stage that answered
    (NaN for products only the vector search found); ``cosine`` (n,) float32 MiniLM cosine to the query
    (NaN when the tenant has no vectors or the product has none); ``vectors`` (n, d) float32 the
    products' unit embeddings (zero rows for products without one), or None without vectors.
    Lexical candidates come first, in lexical order. ``served`` (n,) int64: indices into ``ords`` in the
    order the pipeline serves them without a learned ranker (the hybrid stage's fused order); None:
    ``ords``' own order.
    """

    ords: np.ndarray
    lexical: np.ndarray
    cosine: np.ndarray
    vectors: np.ndarray | None = None
    served: np.ndarray | None = None
