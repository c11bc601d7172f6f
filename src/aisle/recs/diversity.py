"""Diversity re-ranking by Maximal Marginal Relevance over category and brand.

MMR (Carbonell & Goldstein, "The use of MMR, diversity-based reranking for reordering documents and
producing summaries", SIGIR 1998) picks greedily the item maximising

    lambda * rel(i) - (1 - lambda) * max_{j in selected} sim(i, j)

Here ``rel`` is the item's score min-max normalised to [0, 1] over the candidates and
``sim(i, j) = 0.5 * [same category] + 0.5 * [same brand]`` (1 when both match).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

DiversityLevel = Literal["none", "low", "medium", "high"]

#: lambda of each level: 1.0 is pure relevance, lower trades relevance for spread.
LAMBDA: dict[str, float] = {"none": 1.0, "low": 0.8, "medium": 0.6, "high": 0.35}


def mmr(
    scores: Sequence[float],
    categories: Sequence[object],
    brands: Sequence[object],
    k: int,
    level: DiversityLevel = "medium",
) -> list[int]:
    """Indices of ``k`` candidates in MMR order.

    Args:
        scores: relevance of each candidate (any scale; higher is better), best first or not.
        categories, brands: the candidates' category and brand (None: never similar to anything).
        k: how many to pick (at most ``len(scores)``).
        level: diversity level; ``"none"`` returns the top ``k`` by score.

    Returns:
        Positions into ``scores``, in the chosen order. O(k * n) time.
    """
    n = len(scores)
    k = min(k, n)
    order = sorted(range(n), key=lambda i: -scores[i])
    lam = LAMBDA[level]
    if lam >= 1.0 or k <= 1:
        return order[:k]
    lo, hi = min(scores), max(scores)
    span = hi - lo
    rel = [(s - lo) / span if span > 0 else 1.0 for s in scores]
    # max similarity of each candidate to the picked set, updated incrementally
    max_sim = [0.0] * n
    picked: list[int] = []
    remaining = set(order)
    while len(picked) < k:
        best, best_value = -1, float("-inf")
        for i in order:
            if i not in remaining:
                continue
            value = lam * rel[i] - (1.0 - lam) * max_sim[i]
            if value > best_value:
                best, best_value = i, value
        picked.append(best)
        remaining.discard(best)
        cb, bb = categories[best], brands[best]
        for i in remaining:
            sim = 0.5 * (cb is not None and categories[i] == cb) + 0.5 * (bb is not None and brands[i] == bb)
            if sim > max_sim[i]:
                max_sim[i] = sim
    return picked
