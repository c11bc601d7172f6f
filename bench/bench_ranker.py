"""Learned search ranker benchmark (issue 7): quality on the Home Depot dev judgments and its cost.

Figures printed:
- NDCG@10 of the pipeline without the ranker (hybrid, the tenant default) on the judged queries;
- 5-fold cross-validated NDCG@10 of the ranker (each query ranked by a model that never saw it): the
  honest estimate for unseen queries, and the figure to compare with the issue's bar;
- in-sample NDCG@10 (the final model, trained on every dev query, scoring those same queries), printed
  only to show how much of it is memorisation;
- cost: feature collection (one search per judged query), one fit on every query, and the per-query
  latency of the pipeline with and without the rerank stage (p50/p99, in process, one thread).

Uses the work directory of :mod:`bench.bench_vectors` (catalogs and vectors built once; this module
alone needs only homedepot).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from bench.bench_vectors import _workdir, pct, setup


def main(data_dir: Path) -> None:
    import onnxruntime  # noqa: F401  (before usearch)

    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.search.evaluation import load_judgments, ndcg_at_k
    from aisle.search.indexes import IndexRegistry
    from aisle.search.pipeline import SearchPipeline, default_stages
    from aisle.search.query import SearchQuery
    from aisle.search.ranking.store import RankerRecord, RankerStore
    from aisle.search.training.ranker import DEFAULT_ROUNDS, collect, cross_validate, fit, ranked_ids
    from aisle.vectors.search import VectorSearch
    from aisle.vectors.store import VectorStore

    work = _workdir()
    work.mkdir(parents=True, exist_ok=True)
    env = setup(work, data_dir, ("homedepot",), images=False)
    tenants = Tenants(open_blob_store(env["AISLE_STORAGE_URL"]), ttl=3600)
    data = Path(env["AISLE_DATA_DIR"])
    index = IndexRegistry(tenants, data).get("homedepot")
    config = tenants.config("homedepot")
    qrels = load_judgments(data_dir / "homedepot" / "judgments_dev.csv")
    vectors = VectorSearch(VectorStore(data))
    pipeline = SearchPipeline(default_stages(vectors=vectors), budget_s=5.0)
    ids = index.product_ids()

    start = time.perf_counter()
    qs = collect(pipeline, index, config, qrels)
    collect_s = time.perf_counter() - start
    print(f"features: {len(qs.queries)} queries, {qs.rows} candidates in {collect_s:.0f} s")
    start = time.perf_counter()
    cv = cross_validate(qs, qrels, ids, folds=5, progress=print)
    print(
        f"homedepot NDCG@10 without ranker (hybrid): {cv.baseline_ndcg10:.4f}; "
        f"with ranker, 5-fold cross-validated: {cv.ndcg10:.4f} "
        f"(folds {', '.join(f'{x:.4f}' for x in cv.per_fold)}; {time.perf_counter() - start:.0f} s)"
    )
    start = time.perf_counter()
    booster = fit(qs)
    fit_s = time.perf_counter() - start
    in_sample = float(
        np.mean([ndcg_at_k(ranked_ids(qs, i, booster, ids), qrels[q]) for i, q in enumerate(qs.queries)])
    )
    print(
        f"final fit on all {len(qs.queries)} queries ({DEFAULT_ROUNDS} rounds): {fit_s:.1f} s; "
        f"in-sample NDCG@10 {in_sample:.4f} (memorised queries: not an estimate for new ones)"
    )

    store = RankerStore(open_blob_store(f"file://{work / 'ranker-bucket'}"))
    record = RankerRecord(version=0, features=[], queries=len(qs.queries), candidates=qs.rows)
    store.save("homedepot", booster.model_to_string(), record)
    reranked = SearchPipeline(default_stages(vectors=vectors, rankers=store), budget_s=5.0)
    sample = qs.queries[::20]
    for name, pipe in (("without ranker", pipeline), ("with ranker", reranked)):
        for q in sample[:20]:
            pipe.search(index, config, SearchQuery(q, size=10))  # warm caches (query embeddings, token table)
        times = []
        for q in sample:
            t = time.perf_counter()
            pipe.search(index, config, SearchQuery(q, size=10))
            times.append((time.perf_counter() - t) * 1000)
        print(
            f"homedepot search {name} (hybrid, in process): p50 {pct(times, 50):.2f} ms, "
            f"p99 {pct(times, 99):.2f} ms over {len(times)} queries"
        )
