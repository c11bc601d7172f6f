"""A static query encoder distilled from MiniLM: a query's vector is a sum of rows of one token table.

Embedding a new query with MiniLM int8 costs about 4 ms of CPU on one core (issue 18's profile), more
than a whole Typesense search, and the hybrid stage embeds every new query. This encoder answers in
tens of microseconds, at a small cost in quality (Home Depot dev NDCG@10 with hybrid retrieval, in
process: 0.4276 with MiniLM query vectors, 0.4236 with these; lexical alone 0.4181).

Distillation (after Model2Vec, Tulkens & van Dongen 2024): every WordPiece token ``t`` of the
vocabulary goes through MiniLM alone, as ``[CLS] t [SEP]``, and its output at ``t``'s position is its
static vector (:func:`token_vectors`, about 30 s on one core, kept under the data directory). A text's
static vector is the normalised sum of its tokens' vectors; alone, it agrees with MiniLM's vector of
the same query only loosely (mean cosine 0.70 on the Home Depot dev queries). So a linear map ``W``
(384 x 384) is fitted per tenant from the static vectors of its product texts to their MiniLM vectors,
which the text table already holds: no extra MiniLM call, and no judged query is used. The fit is
ridge regression (Hoerl & Kennard 1970) shrunk towards the identity, ``W = (S'S + I)^-1 (S'F + I)``, so
a small catalog keeps close to the unmapped table instead of over-fitting: mean cosine 0.78 when
fitted on 120 Home Depot titles, 0.82 on 1,000, 0.83 on all 54,667 (0.70 unmapped; measured on 600 dev
queries). ``W`` is folded into the table
(``E @ W``), so a query costs one tokenisation and the sum of a few rows.

The folded table (float16, (vocabulary, 384), about 23 MB) is written into the tenant's text vector
table directory as :data:`QUERY_TOKENS` and travels with it (bucket publishing, replicas). A table
built before this file existed has none, and its queries go through MiniLM as before.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from aisle.vectors.text_encoder import DIMENSION, ENCODER_ID, TextEncoder, model_files

QUERY_TOKENS = "query_tokens.npy"
TOKEN_STATES = f"token-states-{ENCODER_ID}.npy"  # the unfitted token table, under ``data_dir / "models"``
RIDGE = 1.0
FIT_ROWS = 16_384
"""Texts whose static vectors :meth:`StaticQueryEncoder.fit` holds at once. It held every text's, as a
list of arrays, stacked, then in float64, beside the vectors in float64: with the caller's copies, the
text vector build of 1M products peaked at 11.9 GiB (issue 42's bench_scale). Measured on 200k texts:
the fit added 969 MiB to the peak before, nothing measurable now."""
UNKNOWN_TOKEN = 100  # [UNK] in MiniLM's vocabulary: the vector of a text with no token at all

Progress = Callable[[str, int, int], None]


def token_vectors(encoder: TextEncoder, *, batch: int = 2048, progress: Progress | None = None) -> np.ndarray:
    """Each vocabulary token's MiniLM output alone (``[CLS] t [SEP]``, the output at ``t``):
    float32, (vocabulary, 384). About 30 s on one core; ``batch`` ids a call (a multiple of
    :data:`~aisle.vectors.text_encoder.TOKEN_BATCH`, so the batches do not depend on it)."""
    vocab = encoder.vocabulary_size
    out = np.zeros((vocab, DIMENSION), dtype=np.float32)
    for lo in range(0, vocab, batch):
        ids = np.arange(lo, min(lo + batch, vocab), dtype=np.int64)
        out[ids] = encoder.single_token_states(ids)
        if progress:
            progress("query tokens", int(ids[-1]) + 1, vocab)
    return out


def cached_token_vectors(
    data_dir: Path, encoder: Callable[[], TextEncoder], *, progress: Progress | None = None
) -> np.ndarray:
    """:func:`token_vectors`, computed once per data directory and kept there (``models/``
    :data:`TOKEN_STATES`, written atomically), read back memory-mapped afterwards (about 45 MB, shared
    through the page cache by every build of the process and the machine; they depend only on the
    model). Read-only either way. ``encoder`` is called only when computing.

    Raises:
        ValueError: the file is there but is not an array (a damaged file is not silently replaced).
    """
    path = Path(data_dir) / "models" / TOKEN_STATES
    states = np.load(path, mmap_mode="r") if path.is_file() else None
    if states is None or states.ndim != 2 or states.shape[1] != DIMENSION:  # absent or not ours
        states = token_vectors(encoder(), progress=progress)
        _save_atomically(path, states)
        states.setflags(write=False)
    return states


def _save_atomically(path: Path, states: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        np.save(fh, states)
    os.replace(tmp, path)


class StaticQueryEncoder:
    """Query text -> unit float32 vector (384,) from a token table (see the module docstring).

    ``tokens``: (vocabulary, 384), any float dtype, may be memory-mapped. Thread-safe.
    """

    def __init__(self, tokens: np.ndarray) -> None:
        from tokenizers import Tokenizer

        self.tokens = tokens
        tokenizer = Tokenizer.from_file(str(model_files()[1]))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        self._tokenizer = tokenizer

    def token_ids(self, text: str) -> np.ndarray:
        """WordPiece ids of ``text`` without special tokens ([UNK] alone for a text without any)."""
        ids = self._tokenizer.encode(text, add_special_tokens=False).ids
        return np.asarray(ids or [UNKNOWN_TOKEN], dtype=np.int64)

    def encode(self, text: str) -> np.ndarray:
        """The unit vector of ``text``: float32, (384,)."""
        vector = self.tokens[self.token_ids(text)].astype(np.float32).sum(axis=0)
        return (vector / max(float(np.linalg.norm(vector)), 1e-12)).astype(np.float32)

    @classmethod
    def fit(cls, base: np.ndarray, texts: Sequence[str], vectors: np.ndarray) -> StaticQueryEncoder:
        """Fit the map from the static vectors of ``texts`` (a tenant's product texts) to their MiniLM
        ``vectors`` (float32, (len(texts), 384), unit rows), and fold it into the token table ``base``
        (:func:`token_vectors`). A few seconds for 55k texts; memory: :data:`FIT_ROWS` texts at a time.

        Raises:
            ValueError: no text, or ``vectors`` of another shape.
        """
        if not len(texts) or vectors.shape != (len(texts), DIMENSION):
            raise ValueError(f"need one {DIMENSION}-d vector per text, got {vectors.shape} for {len(texts)}")
        unmapped = cls(base)
        prior = RIDGE * np.eye(DIMENSION)  # shrunk towards the identity: the unmapped table
        gram, cross = prior.copy(), prior.copy()  # S'S + I and S'F + I, summed FIT_ROWS texts at a time
        for lo in range(0, len(texts), FIT_ROWS):
            static = np.stack([unmapped.encode(t) for t in texts[lo : lo + FIT_ROWS]]).astype(np.float64)
            gram += static.T @ static
            cross += static.T @ np.asarray(vectors[lo : lo + FIT_ROWS], dtype=np.float64)
        weights = np.linalg.solve(gram, cross)
        return cls((base.astype(np.float64) @ weights).astype(np.float16))

    @classmethod
    def load(cls, directory: Path) -> StaticQueryEncoder | None:
        """The encoder saved in ``directory`` (memory-mapped), or None when it has none."""
        path = Path(directory) / QUERY_TOKENS
        if not path.is_file():
            return None
        return cls(np.load(path, mmap_mode="r"))
