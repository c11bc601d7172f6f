"""Offline evaluation protocols of ``../shared/data/README.md``.

* :func:`session_next_item`: session-rec's next-item protocol (Ludewig et al. 2021): for every test
  session and every prefix ``0..p`` rank all training items and score the item at ``p+1``;
  HR@K = share of events whose next item is in the top K, MRR@K = mean of ``1/rank`` (0 past K).
* :func:`basket_completion`: the frequently-bought-together protocol: for every (test basket, seed in
  it) the seed's top-K list hits when it holds another product of the basket;
  recall@K = ``|topK ∩ rest| / min(|rest|, K)``.
* :func:`attribute_agreement`: share of top-K neighbours that share an attribute with the seed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np
import polars as pl


def session_next_item(
    scores: Callable[[np.ndarray, float], np.ndarray],
    index: dict[str, int],
    test: pl.DataFrame,
    cutoff: int = 20,
    exclude_current: bool = False,
) -> dict[str, float]:
    """HR@cutoff and MRR@cutoff of a session model on ``test`` (columns session_id, item_id, ts).

    ``scores(session_item_indices, now)`` returns a score per training item. The rank of the true next
    item is ``1 + #items scored strictly higher``; a zero score or an unknown item is a miss.
    ``exclude_current`` drops the last viewed item from the ranking (as serving does with seeds).
    Also reports ``p99_ms`` and ``mean_ms`` of one ``scores`` call.
    """
    test = test.sort(["session_id", "ts"], maintain_order=True)
    hits = rr = n = 0.0
    lat = []
    for _sid, grp in test.group_by("session_id", maintain_order=True):
        idx = np.array([index.get(str(x), -1) for x in grp["item_id"].to_list()], dtype=np.int64)
        ts = grp["ts"].to_numpy()
        for p in range(len(idx) - 1):
            n += 1
            target = idx[p + 1]
            prefix = idx[: p + 1]
            prefix = prefix[prefix >= 0]
            if target < 0 or len(prefix) == 0:
                continue
            t0 = time.perf_counter()
            s = scores(prefix, float(ts[p]))
            lat.append(time.perf_counter() - t0)
            if exclude_current:
                s = s.copy()
                s[prefix[-1]] = -np.inf
            if s[target] <= 0:
                continue
            rank = 1 + int((s > s[target]).sum())
            if rank <= cutoff:
                hits += 1
                rr += 1.0 / rank
    lat_ms = np.array(lat) * 1000 if lat else np.zeros(1)
    return {
        f"hr@{cutoff}": hits / max(n, 1),
        f"mrr@{cutoff}": rr / max(n, 1),
        "events": n,
        "p99_ms": float(np.percentile(lat_ms, 99)),
        "mean_ms": float(lat_ms.mean()),
    }


def basket_completion(
    recommend: Callable[[str], Sequence[str]], baskets: list[list[str]], cutoff: int = 10
) -> dict[str, float]:
    """HR@cutoff and recall@cutoff over every (basket, seed) pair; ``recommend(seed)``: ids, best first."""
    hits = rec = n = 0.0
    cache: dict[str, set[str]] = {}
    for basket in baskets:
        items = set(basket)
        for seed in items:
            top = cache.get(seed)
            if top is None:
                top = cache[seed] = set(list(recommend(seed))[:cutoff])
            rest = items - {seed}
            got = len(top & rest)
            n += 1
            hits += got > 0
            rec += got / min(len(rest), cutoff)
    return {f"hr@{cutoff}": hits / max(n, 1), f"recall@{cutoff}": rec / max(n, 1), "pairs": n}


def attribute_agreement(
    neighbours: Callable[[str], Sequence[str]],
    products: pl.DataFrame,
    attributes: Sequence[str],
    seeds: Sequence[str],
    k: int = 10,
) -> dict[str, float]:
    """Mean share of each seed's top-``k`` neighbours that share each attribute with the seed."""
    table = {
        c: dict(zip(products["id"].cast(pl.Utf8).to_list(), products[c].to_list(), strict=True))
        for c in attributes
    }
    sums = dict.fromkeys(attributes, 0.0)
    counted = 0
    for seed in seeds:
        nb = list(neighbours(seed))[:k]
        if not nb:
            continue
        counted += 1
        for c in attributes:
            v = table[c].get(seed)
            sums[c] += sum(table[c].get(x) == v for x in nb) / len(nb)
    return {f"same_{c}@{k}": s / max(counted, 1) for c, s in sums.items()} | {"seeds": counted}
