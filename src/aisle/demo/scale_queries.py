"""The query mix of a synthetic catalog (:mod:`aisle.demo.scale`), drawn from its own products.

Myntra-style products get the bench's fashion mix (``bench/bench_search.fashion_queries``), Home
Depot-style ones a mix shaped like ``homedepot/queries_dev.txt`` (proportions in :data:`FASHION_MIX` and
:data:`HOME_MIX`). A misspelt query changes one letter of the last word of a two-word phrase (dropped,
doubled or swapped with the next, as in the dev queries' ``lawn sprkinler``, ``gas mowe``), so every
query keeps at least one word of the catalog.
"""

from __future__ import annotations

import numpy as np
import polars as pl

FASHION_MIX = {"colour_type": 0.4, "brand_type": 0.3, "title_prefix": 0.3}
HOME_MIX = {"type": 0.4, "brand_type": 0.2, "colour_type": 0.15, "typo": 0.25}


def typo(word: str, rng: np.random.Generator) -> str:
    """``word`` with one letter dropped, doubled, or swapped with the next (not the first letter)."""
    if len(word) < 4:
        return word
    at = int(rng.integers(1, len(word) - 1))
    kind = int(rng.integers(0, 3))
    if kind == 0:
        return word[:at] + word[at + 1 :]
    if kind == 1:
        return word[: at + 1] + word[at:]
    return word[:at] + word[at + 1] + word[at] + word[at + 2 :]


def _pick(mix: dict[str, float], rng: np.random.Generator) -> str:
    return str(rng.choice(list(mix), p=list(mix.values())))


def _fashion_query(row: dict[str, str | None], rng: np.random.Generator) -> str:
    kind = _pick(FASHION_MIX, rng)
    if kind == "colour_type":
        return f"{row['colour'] or ''} {row['article_type']}"
    if kind == "brand_type":
        return f"{row['brand'] or ''} {row['article_type']}"
    return " ".join((row["name"] or "").split()[:3])


def _home_query(row: dict[str, str | None], rng: np.random.Generator) -> str:
    kind, kind_words = _pick(HOME_MIX, rng), row["article_type"] or ""
    if kind == "brand_type":
        return f"{row['brand'] or ''} {kind_words}"
    if kind == "colour_type" and row["colour"]:
        return f"{row['colour']} {kind_words}"
    if kind == "typo":
        words = kind_words.split() if len(kind_words.split()) > 1 else [row["brand"] or "", kind_words]
        return " ".join([*words[:-1], typo(words[-1], rng)])
    return kind_words


def query_mix(products: pl.DataFrame, rng: np.random.Generator, *, home: str) -> list[str]:
    """One query per row of ``products`` (``name``, ``brand``, ``colour``, ``article_type``,
    ``master_category``; Home Depot-style rows are those whose master category is ``home``), shuffled,
    lower case, empty ones dropped."""
    queries = []
    for row in products.iter_rows(named=True):
        query = _home_query(row, rng) if row["master_category"] == home else _fashion_query(row, rng)
        query = " ".join(query.lower().split())
        if query:
            queries.append(query)
    order = rng.permutation(len(queries))
    return [queries[i] for i in order]
