"""The similarity floor of a tenant's text vectors: the cosine a product must reach to be called close
to a query, calibrated on the tenant's own catalog.

Nearest-neighbour search always answers: a keyboard mash ("qwrtzp") has nearest products too, about as
close as a real query's tenth-best. Hybrid search (:mod:`aisle.search.stages.hybrid`) therefore adds a
product no query word matched only when its cosine to the query reaches the floor, and a query with no
close product answers no results (Typesense's ``distance_threshold``, here set from data).

Calibration (the null hypothesis of "no product is meant"): :data:`NULL_QUERIES` strings that name no
product (:func:`null_queries`: random letters, keyboard-row runs, pairs of random "words", letters and
digits; seeded, so a table's floor is reproducible) are embedded with the query encoder, and each one's
nearest product in the table is looked up (the ANN index, its :data:`NULL_DEPTH` nearest rescored
exactly). The floor is the highest of those nearest cosines: no calibration string would find a
product. Measured on fashion (static encoder / MiniLM): 300 such strings' nearest cosines reached
0.575 / 0.498, while the median real query's nearest product was at 0.693 / 0.726 and its 1st
percentile at 0.453 / 0.516. MiniLM separates the two better, so the hybrid stage embeds a query with
MiniLM when no word of it matched (the vector leg is then the whole answer) and compares with MiniLM's
floor.

The floors are written beside the table (:data:`FLOOR_FILE`, one per encoder) when the table is built
(MiniLM's embeddings of the calibration strings are kept in the data directory's ``models/``, so only
a host's first build pays for them); a table built before them is calibrated when first asked
(:func:`floor_of`), once per process.
"""

from __future__ import annotations

import os
import random
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import orjson

if TYPE_CHECKING:
    from aisle.vectors.ann_usearch import UsearchAnnIndex
    from aisle.vectors.text_encoder import TextEncoder

FLOOR_FILE = "similarity_floor.json"
NULL_QUERIES = 400
SEED = 43
NULL_VECTORS = f"null-queries-{NULL_QUERIES}-{SEED}.npy"
NULL_DEPTH = 10
ENCODERS = ("static", "minilm")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_lock = threading.Lock()
_computed: dict[tuple[str, str], float] = {}


def null_queries(n: int = NULL_QUERIES, seed: int = SEED) -> list[str]:
    """``n`` strings that name no product (module docstring), the same for a given ``seed``."""
    rng = random.Random(seed)

    def word(lo: int, hi: int, alphabet: str = _LETTERS) -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))

    out = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.35:
            out.append(word(4, 10))
        elif kind < 0.6:
            row = rng.choice(_ROWS)
            start = rng.randint(0, len(row) - 3)
            out.append(row[start : start + rng.randint(3, 7)])
        elif kind < 0.8:
            out.append(f"{word(3, 7)} {word(3, 7)}")
        else:
            out.append(word(4, 9, _LETTERS + "0123456789"))
    return out


def calibrate(ann: UsearchAnnIndex, null_vectors: np.ndarray) -> float:
    """The floor for queries embedded like ``null_vectors`` (the :func:`null_queries`' unit vectors,
    float32 (n, d)) against the vectors of ``ann``: the highest nearest-product cosine among them
    (module docstring). Raises ValueError when the index is empty."""
    if len(ann) == 0:
        raise ValueError("an empty vector table has no floor")
    best = -1.0
    for query in null_vectors:
        near = ann.search(query, NULL_DEPTH, None)
        keys = np.asarray(near.keys, dtype=np.int64)
        if len(keys):
            best = max(best, float((ann.rows(keys) @ query).max()))
    return round(best, 4)


def static_null_vectors(encode: Callable[[str], np.ndarray]) -> np.ndarray:
    """The :func:`null_queries` embedded one by one by a static query encoder's ``encode``."""
    return np.stack([encode(q) for q in null_queries()])


def cached_null_vectors(data_dir: Path, model: Callable[[], TextEncoder]) -> np.ndarray:
    """The :func:`null_queries` embedded by MiniLM (``model()``, called only when computing): computed
    once per data directory and kept in ``models/`` (:data:`NULL_VECTORS`), as they depend only on the
    model and the seed, so a build does not embed them again."""
    path = Path(data_dir) / "models" / NULL_VECTORS
    if path.is_file():
        cached = np.load(path)
        if cached.ndim == 2 and cached.shape[0] == NULL_QUERIES:
            return cached
    vectors = np.asarray(model().encode(null_queries()), dtype=np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        np.save(fh, vectors)
    os.replace(tmp, path)
    return vectors


def save_floors(directory: Path, floors: dict[str, float]) -> None:
    """Write ``floors`` (encoder -> floor) beside a table's files, atomically."""
    path = Path(directory) / FLOOR_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_bytes(orjson.dumps({"version": 1, "floors": floors}))
    os.replace(tmp, path)


def saved_floors(directory: Path) -> dict[str, float]:
    """The floors written beside the table in ``directory`` (empty when none were)."""
    try:
        data = orjson.loads((Path(directory) / FLOOR_FILE).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return {str(k): float(v) for k, v in data.get("floors", {}).items()}


def floor_of(
    directory: Path, encoder: str, ann: UsearchAnnIndex, null_vectors: Callable[[], np.ndarray]
) -> float:
    """The ``encoder``'s floor for the table in ``directory``: as saved, else calibrated now on
    ``null_vectors()``; either kept for this process (a table directory's files are written once, when
    it is built: a new build is a new directory)."""
    key = (str(directory), encoder)
    with _lock:
        known = _computed.get(key)
    if known is None:  # read (or calibrated) once per table and process: a table's files never change
        known = saved_floors(directory).get(encoder)
        if known is None:
            known = calibrate(ann, null_vectors())
        with _lock:
            _computed[key] = known
    return known
