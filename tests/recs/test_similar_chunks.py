"""SIMILAR_ITEMS training in bounded memory: searched and re-ranked in chunks, as if all at once."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from aisle.recs.models import similar

N = 700


def _catalog() -> tuple[pl.DataFrame, np.ndarray]:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(N, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    products = pl.DataFrame(
        {
            "id": [f"p{i}" for i in range(N)],
            "article_type": rng.choice(["Tshirts", "Jeans", "Watches", ""], N).tolist(),
            "gender": rng.choice(["Men", "Women"], N).tolist(),
            "colour": rng.choice(["Red", "Blue", "Black"], N).tolist(),
        }
    )
    return products, vectors


def _one_chunk_reference(model: similar.SimilarItemsModel, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The re-ranking over every product at once (the code before chunking, kept here as the oracle)."""
    rows = np.arange(len(model.items))
    cand = np.where(cand >= len(model.items), rows[:, None], cand)
    cos = np.einsum("id,ijd->ij", model.vectors, model.vectors[cand])
    agree = (model.codes[:, cand] == model.codes[:, :, None]) & (model.codes[:, :, None] >= 0)
    score = cos + np.tensordot(model._w, agree.astype(np.float32), axes=1)
    score[cand == rows[:, None]] = -np.inf
    order = np.argsort(-score, axis=1, kind="stable")[:, : model.params.neighbours]
    return np.take_along_axis(cand, order, axis=1), np.take_along_axis(score, order, axis=1)


def test_chunks_give_the_lists_of_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    products, vectors = _catalog()
    graph = similar.build_ann(vectors)  # one graph for both: an HNSW build is not deterministic
    monkeypatch.setattr(similar, "build_ann", lambda _v: graph)
    monkeypatch.setattr(similar, "SEARCH_ROWS", 256)  # 700 rows: chunks of 256, 256, 188...
    monkeypatch.setattr(similar, "RERANK_ROWS", 100)  # ...re-ranked 100 at a time, a short last one
    model = similar.train_similar_items(products, vectors)

    n_cand = similar.SimilarParams().candidates + 1
    cand = np.asarray(graph.search(vectors, n_cand).keys, dtype=np.int64).reshape(N, n_cand)
    want_idx, want_score = _one_chunk_reference(model, cand)
    assert model.nb_idx.shape == (N, similar.SimilarParams().neighbours)
    assert np.array_equal(model.nb_idx, want_idx) and np.array_equal(model.nb_score, want_score)
    assert not (model.nb_idx == np.arange(N)[:, None]).any()  # never the product itself
