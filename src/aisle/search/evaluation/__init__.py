"""Offline search quality, apart from serving: NDCG@10 on graded judgments, in process or over HTTP
(:mod:`aisle.search.evaluation.ndcg`)."""

from aisle.search.evaluation.ndcg import (
    EvalReport,
    Qrels,
    evaluate,
    evaluate_over_http,
    gain,
    load_judgments,
    ndcg_at_k,
)

__all__ = ["EvalReport", "Qrels", "evaluate", "evaluate_over_http", "gain", "load_judgments", "ndcg_at_k"]
