"""Offline search quality: NDCG@10 on graded judgments.

Protocol (``shared/data/README.md``): gain = (relevance - 1) / 2 for relevance in 1..3, discount
log2(rank + 1), unjudged products gain 0; NDCG@10 averaged over queries with at least one judged
product of relevance > 1 (Järvelin & Kekäläinen 2002).
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from aisle.search.query import SearchQuery

Qrels = dict[str, dict[str, float]]


def load_judgments(path: Path) -> Qrels:
    """``{query: {product_id: relevance}}`` from a ``query,product_id,relevance`` CSV."""
    qrels: Qrels = defaultdict(dict)
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            qrels[row["query"]][row["product_id"]] = float(row["relevance"])
    return dict(qrels)


def gain(relevance: float) -> float:
    return max(0.0, (relevance - 1.0) / 2.0)


def ndcg_at_k(ranked: Sequence[str], judged: dict[str, float], k: int = 10) -> float:
    """NDCG@k of one ranked id list against its judgments (0 when nothing judged is relevant)."""
    dcg = sum(gain(judged.get(pid, 1.0)) / math.log2(rank + 2) for rank, pid in enumerate(ranked[:k]))
    ideal = sorted((gain(r) for r in judged.values()), reverse=True)[:k]
    idcg = sum(g / math.log2(rank + 2) for rank, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


@dataclass
class EvalReport:
    ndcg10: float
    queries: int
    skipped: int
    errors: int
    per_query: dict[str, float]


def evaluate(
    search: Callable[[SearchQuery], list[str]], qrels: Qrels, *, size: int = 10, concurrency: int = 1
) -> EvalReport:
    """Run ``search(SearchQuery(query, size=size)) -> ranked ids`` over every scorable query and
    average NDCG@10 (``size`` at least 10 for the score to see a full first page)."""
    scorable = {q: j for q, j in qrels.items() if any(r > 1.0 for r in j.values())}
    per_query: dict[str, float] = {}
    errors = 0

    def one(query: str) -> tuple[str, float | None]:
        try:
            return query, ndcg_at_k(search(SearchQuery(query, size=size)), scorable[query])
        except Exception:
            return query, None

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        for query, score in pool.map(one, sorted(scorable)):
            if score is None:
                errors += 1
                score = 0.0
            per_query[query] = score
    mean = sum(per_query.values()) / len(per_query) if per_query else 0.0
    return EvalReport(mean, len(per_query), len(qrels) - len(scorable), errors, per_query)


def evaluate_over_http(
    url: str, tenant: str, qrels: Qrels, *, token: str | None = None, concurrency: int = 4
) -> EvalReport:
    """:func:`evaluate` through ``POST {url}/search`` of a running search service."""
    import httpx

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    client = httpx.Client(base_url=url, headers=headers, timeout=30.0)

    def search(query: SearchQuery) -> list[str]:
        resp = client.post("/search", json={"query": query.text, "tenant": tenant, "size": query.size})
        resp.raise_for_status()
        return [p["id"] for p in resp.json()["products"]]

    try:
        return evaluate(search, qrels, concurrency=concurrency)
    finally:
        client.close()
