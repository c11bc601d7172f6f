"""Text vectors of the generated tenant (issue 42): build time, ANN memory, ANN recall@20 against exact.

Run by :mod:`bench.bench_scale` after its search figures (so the workers it measured served the tenant
lexically, as Typesense 0.24.1 does: that version embeds nothing itself, so these rows have no
Typesense figure):

- **build**: ``python -m aisle.cli vectors build scale`` as a child on the same bucket and data dir as
  the import: its wall time, the embedding rate it reports, its peak RSS (``wait4``). It embeds every
  product's text (:func:`aisle.vectors.build.product_texts`), fits the tenant's query encoder, builds
  the HNSW graph and writes the table;
- **ANN memory**: the size of the table's ``ann`` files (the graph and the half-precision matrix), which
  every search worker maps (one copy in the page cache);
- **similar items**: ``aisle train SIMILAR_ITEMS --tenant scale`` as a child (it reads the text vectors
  just built, searches each product's 101 candidates in an HNSW graph of its own and re-ranks them by
  attribute agreement): wall time and peak RSS;
- **recall@20**: the generated queries (up to :data:`RECALL_QUERIES`), each embedded as search embeds
  it (the table's static query encoder), searched in the graph without a filter
  (:meth:`~aisle.vectors.ann_usearch.UsearchAnnIndex.search`), against the exact 20 nearest over every
  stored vector (the same half-precision rows, scored in float32, in blocks): the mean share of the
  exact 20 that the graph found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.scale_measure import run_cli

RECALL_QUERIES = 500
K = 20
BLOCK = 100_000  # matrix rows scored at once: 500 queries x 100k rows of float32 = 200 MB


@dataclass
class VectorsRun:
    """``aisle vectors build``'s wall seconds, reported embedding rate (texts a second; nan when not
    printed), peak RSS (MiB); the table's ANN files (MiB), products, recall@20 and queries used;
    ``aisle train SIMILAR_ITEMS``'s wall seconds and peak RSS."""

    wall_s: float
    rate: float
    peak_mib: float
    ann_mib: float
    products: int
    recall: float
    queries: int
    similar_s: float = float("nan")
    similar_peak_mib: float = float("nan")


def build(tenant: str, env: dict[str, str]) -> tuple[float, float, float, str]:
    """Run ``aisle vectors build TENANT``: (wall s, texts a second it printed, peak RSS MiB, output).

    Raises:
        RuntimeError: the command failed (its output given).
    """
    wall, peak, output = run_cli(["vectors", "build", tenant], env)
    rates = re.findall(r"embedded \d+ texts at (\d+)/s", output)
    return wall, float(rates[-1]) if rates else float("nan"), peak, output


def train_similar(tenant: str, env: dict[str, str]) -> tuple[float, float]:
    """Run ``aisle train SIMILAR_ITEMS --tenant TENANT`` (from the text vectors just built): (wall s,
    peak RSS MiB). Raises RuntimeError (the command failed)."""
    wall, peak, _ = run_cli(["train", "SIMILAR_ITEMS", "--tenant", tenant], env)
    return wall, peak


def exact_top(matrix: np.ndarray, queries: np.ndarray, k: int = K) -> np.ndarray:
    """The ``k`` best rows of ``matrix`` (n, d; any float dtype) for each query (q, d, float32) by inner
    product, in blocks of :data:`BLOCK` rows: int64 (q, k), best first."""
    best_s = np.full((len(queries), 0), -np.inf, dtype=np.float32)
    best_k = np.zeros((len(queries), 0), dtype=np.int64)
    for lo in range(0, matrix.shape[0], BLOCK):
        block = np.asarray(matrix[lo : lo + BLOCK], dtype=np.float32)
        scores = queries @ block.T
        top = np.argpartition(-scores, min(k, scores.shape[1] - 1), axis=1)[:, :k]
        best_s = np.concatenate([best_s, np.take_along_axis(scores, top, axis=1)], axis=1)
        best_k = np.concatenate([best_k, top + lo], axis=1)
        keep = np.argsort(-best_s, axis=1, kind="stable")[:, :k]
        best_s = np.take_along_axis(best_s, keep, axis=1)
        best_k = np.take_along_axis(best_k, keep, axis=1)
    return best_k


def recall_at_k(table_path: Path, queries: list[str], k: int = K) -> tuple[float, int, int]:
    """(mean recall@k of the table's graph against exact search, queries used, products) for
    ``queries`` embedded with the table's static query encoder."""
    from aisle.vectors.table import VectorTable

    table = VectorTable.load(table_path)
    if table.query is None:
        raise RuntimeError(f"{table_path} has no query encoder")
    asked = queries[:RECALL_QUERIES]
    vectors = np.stack([table.query.encode(q) for q in asked]).astype(np.float32)
    ann = table.ann
    present = np.flatnonzero(ann._present)  # the bench reads the stored rows directly
    exact = present[exact_top(ann._matrix[present], vectors, k)]
    found = [set(ann.search(v, k).keys.tolist()) for v in vectors]
    shares = [len(f & set(e.tolist())) / k for f, e in zip(found, exact, strict=True)]
    return float(np.mean(shares)), len(asked), len(present)


def measure(tenant: str, env: dict[str, str], data_dir: Path, queries: list[str]) -> VectorsRun:
    """Build the tenant's text vectors and measure them (module docstring). ``data_dir``: the
    service's ``AISLE_DATA_DIR``."""
    from aisle.vectors.table import latest_table

    wall, rate, peak, _ = build(tenant, env)
    path = latest_table(data_dir, tenant, "text")
    if path is None:
        raise RuntimeError(f"no text table for {tenant} under {data_dir} after the build")
    ann_mib = sum(f.stat().st_size for f in (path / "ann").iterdir()) / 2**20
    recall, asked, products = recall_at_k(path, queries)
    similar_s, similar_peak = train_similar(tenant, env)
    return VectorsRun(wall, rate, peak, ann_mib, products, recall, asked, similar_s, similar_peak)
