"""The issue's offline measurements on the shared data, shared by ``aisle eval recs`` and ``bench/``.

Each run trains on the protocol's training part only and scores its test part
(protocols: ``../shared/data/README.md``, implemented in :mod:`aisle.recs.evaluation.protocols`).
"""

from __future__ import annotations

import gzip
import json
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from aisle.recs.evaluation.protocols import attribute_agreement, basket_completion, session_next_item
from aisle.recs.events import (
    completejourney_categories,
    completejourney_lines,
    priced_catalog,
    yoochoose_events,
)

Progress = Callable[[str], None]


def peak_rss_gb() -> float:
    """Peak resident memory of this process so far, GB (Linux ``ru_maxrss`` is in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def eval_yoochoose(data_dir: Path) -> dict[str, float]:
    """CUSTOMERS_ALSO_VIEW on YooChoose 100k: HR@20, MRR@20 (session-rec protocol), latency, and the same
    with the current item removed from the ranking (as serving removes seeds)."""
    from aisle.recs.training import train_also_view

    t0 = time.perf_counter()
    model = train_also_view(yoochoose_events(data_dir, "train"))
    train_s = time.perf_counter() - t0
    test = yoochoose_events(data_dir, "test").select("session_id", "item_id", "ts")
    res = session_next_item(model.scores, model.index, test)
    no_repeat = session_next_item(model.scores, model.index, test, exclude_current=True)
    return (
        res
        | {
            "hr@20_current_excluded": no_repeat["hr@20"],
            "mrr@20_current_excluded": no_repeat["mrr@20"],
            "train_s": train_s,
        }
        | recommend_latency(model, test)
    )


def recommend_latency(model: Any, test: pl.DataFrame, n: int = 3000) -> dict[str, float]:
    """p50/p99 ms of ``model.recommend`` (k=20) over the first ``n`` test-session prefixes, in process."""
    from aisle.recs.models.base import RecContext

    rows = (
        test.sort(["session_id", "ts"])
        .group_by("session_id", maintain_order=True)
        .agg("item_id")["item_id"]
        .to_list()
    )
    ctxs = []
    for items in rows:
        for p in range(len(items) - 1):
            ctxs.append(RecContext(seeds=[items[p]], k=20, session=items[:p]))
    ctxs = ctxs[:n]
    lat, cpu = [], []
    for ctx in ctxs:
        t, c = time.perf_counter(), time.thread_time()
        model.recommend(ctx)
        lat.append(time.perf_counter() - t)
        cpu.append(time.thread_time() - c)
    ms, cpu_ms = np.array(lat) * 1000, np.array(cpu) * 1000
    return {
        "recommend_p50_ms": float(np.percentile(ms, 50)),
        "recommend_p99_ms": float(np.percentile(ms, 99)),
        # CPU time of the calling thread: the call's own cost, without waits for a busy machine's cores
        "recommend_p99_cpu_ms": float(np.percentile(cpu_ms, 99)),
    }


def eval_completejourney(progress: Progress = print, validation: bool = False) -> dict[str, float]:
    """FBT on Complete Journey (train weeks < 49, test >= 49) plus training cost of every CJ model
    (wall seconds, CPU seconds over all threads, peak resident memory).

    ``validation`` scores the tuning split instead: train weeks < 45, test weeks 45-48 (never the test
    weeks); choose parameters there."""
    from aisle.recs.training import train_bundle_model, train_fbt, train_gbb

    t0, cpu0 = time.perf_counter(), time.process_time()
    lines = completejourney_lines()
    cats = completejourney_categories()
    cut, end = (45, 49) if validation else (49, None)
    if end is not None:
        lines = lines.filter(pl.col("week") < end)
    train = lines.filter(pl.col("week") < cut)
    load_s = time.perf_counter() - t0
    t = time.perf_counter()
    fbt = train_fbt(train, cats)
    fbt_s = time.perf_counter() - t
    progress(f"FBT trained in {fbt_s:.1f} s")
    t = time.perf_counter()
    train_bundle_model(train, cats)
    bundle_s = time.perf_counter() - t
    t = time.perf_counter()
    train_gbb(*priced_catalog(train, cats))
    gbb_s = time.perf_counter() - t
    cpu_s = time.process_time() - cpu0  # CPU seconds of every thread: wall time lies on a busy machine
    test = (
        lines.filter(pl.col("week") >= cut)
        .select("basket_id", "item_id")
        .unique()
        .filter(pl.col("item_id").is_in(list(fbt.index)))
        .filter(pl.len().over("basket_id") >= 2)
    )
    baskets = test.group_by("basket_id").agg("item_id")["item_id"].to_list()
    res = basket_completion(partner_ids(fbt), baskets)
    return res | {
        "load_s": load_s,
        "fbt_train_s": fbt_s,
        "bundles_train_s": bundle_s,
        "gbb_train_s": gbb_s,
        "all_train_s": load_s + fbt_s + bundle_s + gbb_s,
        "all_train_cpu_s": cpu_s,
        "peak_rss_gb": peak_rss_gb(),
    }


def partner_ids(model: Any) -> Callable[[str], list[str]]:
    """``seed -> partner ids, best first`` of a FREQUENTLY_BOUGHT_TOGETHER model."""
    return lambda seed: [i for i, _ in model.partners(seed)]


def fbt_headroom(validation: bool = True, seed: int = 0, progress: Progress = print) -> dict[str, float]:
    """How much a seed-only FBT list gains from seeing the evaluation period itself (a ceiling check).

    Splits the evaluation weeks' baskets at random into halves A and B (``seed``), trains FBT on the
    training weeks alone and again on the training weeks plus half A (baskets from the very weeks and
    households being scored, which no real deployment has), and scores both on half B with the FBT
    protocol. The gap says how much a perfect correction for drift could add; if even the second model
    stays below a bar, better estimation from the past alone is unlikely to reach it. ``validation``
    picks the tuning split (train < 45, evaluate 45-48); otherwise train < 49, evaluate >= 49 (nothing
    is tuned on this figure). Returns ``train_only_*`` and ``with_half_*`` HR@10 and
    recall@10 and the number of (basket, seed) pairs in half B.
    """
    from aisle.recs.training import train_fbt

    lines = completejourney_lines().select("basket_id", "item_id", "ts", "week")
    cats = completejourney_categories()
    cut, end = (45, 49) if validation else (49, None)
    if end is not None:
        lines = lines.filter(pl.col("week") < end)
    train, period = lines.filter(pl.col("week") < cut), lines.filter(pl.col("week") >= cut)
    baskets = period["basket_id"].unique().sort()
    rng = np.random.default_rng(seed)
    half_a = baskets.gather(rng.permutation(len(baskets))[: len(baskets) // 2])
    in_a = pl.col("basket_id").is_in(half_a.implode())
    half_b = period.filter(~in_a)
    out: dict[str, float] = {}
    known: set[str] = set()
    for name, data in (("train_only", train), ("with_half", pl.concat([train, period.filter(in_a)]))):
        model = train_fbt(data.drop("week"), cats)
        progress(f"FBT trained on {name}")
        if not known:  # score both models on the same baskets: items seen in the training weeks
            known = set(model.index)
            test = (
                half_b.select("basket_id", "item_id")
                .unique()
                .filter(pl.col("item_id").is_in(list(known)))
                .filter(pl.len().over("basket_id") >= 2)
            )
            test_baskets = test.group_by("basket_id").agg("item_id")["item_id"].to_list()
        res = basket_completion(partner_ids(model), test_baskets)
        out |= {f"{name}_hr@10": res["hr@10"], f"{name}_recall@10": res["recall@10"], "pairs": res["pairs"]}
    return out


def read_fashion(data_dir: Path) -> pl.DataFrame:
    """The raw fashion catalog (``fashion/products.jsonl.gz``; it holds NaN, so stdlib json parses it)."""
    with gzip.open(data_dir / "fashion" / "products.jsonl.gz", "rt") as f:
        rows = [json.loads(line) for line in f]
    return pl.DataFrame(rows, infer_schema_length=None).with_columns(pl.col("id").cast(pl.Utf8))


def eval_similar(
    products: pl.DataFrame, vectors: np.ndarray | None = None, progress: Progress = print
) -> dict[str, float]:
    """Attribute agreement of top-10 SIMILAR_ITEMS over every product, for plain cosine and the model."""
    from aisle.recs.models.similar import SimilarParams, train_similar_items
    from aisle.recs.training import train_similar

    t = time.perf_counter()
    model = train_similar(products, vectors=vectors, progress=progress)
    train_s = time.perf_counter() - t
    attrs = [c for c in ("article_type", "gender", "colour") if c in products.columns]
    seeds = products["id"].cast(pl.Utf8).to_list()
    res = attribute_agreement(lambda s: [x.item_id for x in model.neighbours(s, 10)], products, attrs, seeds)
    plain = train_similar_items(products, model.vectors, SimilarParams(weights={}))
    base = attribute_agreement(lambda s: [x.item_id for x in plain.neighbours(s, 10)], products, attrs, seeds)
    return res | {f"cosine_only_{k}": v for k, v in base.items() if k != "seeds"} | {"train_s": train_s}
