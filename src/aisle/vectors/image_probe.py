"""A light probe that teaches image features the tenant's own labels (article type, gender, colour).

Plain cosine neighbours of ImageNet features mix what ImageNet cares about (shape, texture) with what a
shopper means by "similar" (same kind of product for the same people). The probe is a ridge regression
(closed form, Hoerl & Kennard 1970) from the L2-normalised 1280-d features to one-hot labels of the
catalog's labelled attributes; the search vector is the feature vector concatenated with the probe's
per-attribute scores (each block L2-normalised and weighted), L2-normalised again, so the inner product
mixes visual similarity with agreement on predicted labels.

Stored as ``probe.npz``: ``weights`` (1280, L) float32, ``bias`` (L,), ``blocks`` (start offsets per
attribute), ``block_weights`` (per attribute), ``feature_weight``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class ImageProbe:
    """Ridge probe over normalised features; :meth:`transform` gives the search vectors."""

    weights: np.ndarray
    bias: np.ndarray
    blocks: np.ndarray
    block_weights: np.ndarray
    feature_weight: float

    @property
    def dimension(self) -> int:
        return int(self.weights.shape[0] + self.weights.shape[1])

    @classmethod
    def fit(
        cls,
        features: np.ndarray,
        labels: list[list[str | None]],
        *,
        ridge: float = 1.0,
        block_weights: list[float] | None = None,
        feature_weight: float = 0.5,
    ) -> ImageProbe:
        """Fit on ``features`` (float32 (n, d), unit rows) and one label list per attribute (n each).

        Missing labels (None or "") contribute no target row for that attribute. ``ridge`` is lambda.
        """
        n, d = features.shape
        targets = []
        starts = []
        offset = 0
        for column in labels:
            values = sorted({v for v in column if v})
            pos = {v: i for i, v in enumerate(values)}
            y = np.zeros((n, len(values)), dtype=np.float32)
            for i, v in enumerate(column):
                if v:
                    y[i, pos[v]] = 1.0
            targets.append(y)
            starts.append(offset)
            offset += len(values)
        y_all = np.concatenate(targets, axis=1)
        x = features.astype(np.float64)
        mean_x = x.mean(axis=0)
        mean_y = y_all.mean(axis=0)
        xc = x - mean_x
        gram = xc.T @ xc + ridge * np.eye(d)
        w = np.linalg.solve(gram, xc.T @ (y_all - mean_y))
        bias = mean_y - mean_x @ w
        bw = np.asarray(block_weights or [1.0] * len(labels), dtype=np.float32)
        return cls(w.astype(np.float32), bias.astype(np.float32), np.asarray(starts), bw, feature_weight)

    def transform(self, features: np.ndarray) -> np.ndarray:
        """Unit feature rows (n, d) -> unit search vectors (n, d + L)."""
        scores = features @ self.weights + self.bias
        parts = [self.feature_weight * features]
        bounds = [*self.blocks.tolist(), scores.shape[1]]
        for b, (lo, hi) in enumerate(itertools.pairwise(bounds)):
            block = scores[:, lo:hi]
            norms = np.linalg.norm(block, axis=1, keepdims=True)
            parts.append(self.block_weights[b] * block / np.clip(norms, 1e-9, None))
        out = np.concatenate(parts, axis=1).astype(np.float32)
        return out / np.clip(np.linalg.norm(out, axis=1, keepdims=True), 1e-12, None)

    def save(self, path: Path) -> None:
        np.savez(
            path,
            weights=self.weights,
            bias=self.bias,
            blocks=self.blocks,
            block_weights=self.block_weights,
            feature_weight=np.float32(self.feature_weight),
        )

    @classmethod
    def load(cls, path: Path) -> ImageProbe:
        with np.load(path) as z:
            return cls(z["weights"], z["bias"], z["blocks"], z["block_weights"], float(z["feature_weight"]))
