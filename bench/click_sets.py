"""The candidate sets of ``bench_click_learning``: what its learners train on, what they are scored on.

- ``train_qs``: the dev queries with a relevant judgment (the queries the simulated shoppers search, their
  clicks drawn from the dev judgments), candidates collected by the lexical pipeline; every learner,
  judgments or clicks, learns from these queries only.
- ``qs``: the queries of the scored judgments file, collected by the same pipeline. Without
  ``--judgments`` (or given the dev file) it is ``train_qs`` itself, the same object, so the default
  run is the bench as it was before the two were told apart.
- ``holdout``: 20% of the scored queries by hash (rows of ``qs``); ``train``: the rows of ``train_qs``
  outside that hash, what the holdout column's learners train on.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np

from bench.click_traffic import TENANT, Shoppers


def _holdout(query: str) -> bool:
    return int(hashlib.sha1(query.encode()).hexdigest(), 16) % 5 == 0


class World(Shoppers):
    """The shoppers' catalog and queries, plus the pipeline features and scoring shared by every run."""

    def __init__(self, data_dir: Path, work: Path, judgments: Path | None) -> None:
        from aisle.search.evaluation import load_judgments
        from aisle.search.pipeline import SearchPipeline, default_stages
        from aisle.search.query import SearchQuery
        from aisle.search.stages.understand import Understand
        from aisle.search.training.ranker import collect

        super().__init__(data_dir, work)
        dev_file = data_dir / "homedepot" / "judgments_dev.csv"
        self.separate = judgments is not None and judgments.resolve() != dev_file.resolve()
        """Scored on another file's queries than the dev queries the learners train on."""
        self.score_qrels = load_judgments(judgments or dev_file)
        start = time.perf_counter()
        plain = SearchPipeline(default_stages(), budget_s=5.0)

        def candidates(qrels):  # type: ignore[no-untyped-def]
            wanted = {q: j for q, j in qrels.items() if any(r > 1 for r in j.values())}
            return collect(
                plain, self.index, self.config, wanted, candidates=self.config.global_.ranking.candidates
            )

        self.train_qs = candidates(self.dev)
        self.qs = candidates(self.score_qrels) if self.separate else self.train_qs
        self.learned = set(self.train_qs.queries)
        self.holdout = [i for i, q in enumerate(self.qs.queries) if _holdout(q)]
        self.train = [i for i, q in enumerate(self.train_qs.queries) if not _holdout(q)]
        # a scored query's behaviour features are looked up by its normalised text, as serving looks
        # them up: the log's own record when shoppers searched it, else what query understanding makes
        understand = SearchPipeline((Understand(),), budget_s=5.0)
        self.scored_norm: dict[str, str] = {}
        if self.separate:
            for q in self.qs.queries:
                graph = understand.run(self.index, self.config, SearchQuery(q, size=10)).graph
                self.scored_norm[q] = graph.normalized if graph is not None else ""
        took = time.perf_counter() - start
        if not self.separate:
            print(
                f"features: {len(self.qs.queries)} scorable queries ({len(self.holdout)} holdout), "
                f"{self.qs.rows} candidates in {took:.0f} s"
            )
            return
        print(
            f"features: {len(self.train_qs.queries)} dev queries to learn from ({len(self.train)} outside "
            f"the holdout hash, {self.train_qs.rows} candidates); {len(self.qs.queries)} scorable queries "
            f"of {judgments} ({len(self.holdout)} holdout, {self.qs.rows} candidates, "
            f"{len(set(self.qs.queries) & self.learned)} of them dev queries too) in {took:.0f} s"
        )

    def score(self, booster: object | None, which: list[int]) -> float:
        """Mean NDCG@10 over the scored queries ``which`` (rows of ``qs``) of ``booster`` reordering
        every candidate (None: the pipeline's own page)."""
        from aisle.search.evaluation import ndcg_at_k
        from aisle.search.training.ranker import ranked_ids

        out = []
        for i in which:
            q = self.qs.queries[i]
            top = self.qs.pipeline_top[i] if booster is None else ranked_ids(self.qs, i, booster, self.ids)  # type: ignore[arg-type]
            out.append(ndcg_at_k(top, self.score_qrels[q]))
        return float(np.mean(out))


def judged_set(world: World, qs, run: Path | None = None, version: int | None = None):  # type: ignore[no-untyped-def]
    """``qs`` (``world.train_qs`` or ``world.qs``) labelled by the dev judgments (the tuning set: the
    labels are read only when training, so a scored query the dev file does not judge is all zeros); with
    a run, the behaviour features of its published ``version`` appended (the serving code's own
    :func:`~aisle.search.ranking.behaviour.with_behaviour`, by the query the log recorded, or for a query
    nobody searched its normalised text, which finds no query-product row)."""
    from aisle.core import analytics_layout as layout
    from aisle.core.storage import open_blob_store
    from aisle.search.ranking.behaviour import BehaviourLookup, with_behaviour
    from aisle.search.training.ranker import QuerySet, label

    lookup = None
    if run is not None:
        scope = open_blob_store(f"file://{run / 'bucket' / TENANT}")
        lookup = BehaviourLookup.from_parquet(
            version or 0,
            scope.get(layout.behaviour_file(version or 0, "query_product.parquet")),
            scope.get(layout.behaviour_file(version or 0, "product.parquet")),
        )
    out = QuerySet()
    for i, q in enumerate(qs.queries):
        judged = world.dev.get(q, {})
        ids = [world.ids[o] for o in qs.ords[i].tolist()]
        x = qs.features[i]
        if run is not None:
            x = with_behaviour(x, lookup, world.norm.get(q) or world.scored_norm.get(q, ""), ids)
        out.queries.append(q)
        out.ords.append(qs.ords[i])
        out.features.append(x)
        out.labels.append(np.asarray([label(judged.get(pid)) for pid in ids], dtype=np.int32))
        out.pipeline_top.append(qs.pipeline_top[i])
        out.served.append(qs.served[i] if qs.served else None)
    return out
