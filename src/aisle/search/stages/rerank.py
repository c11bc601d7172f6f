"""Learned reranking: a tenant's LightGBM ranker reorders the candidates of a relevance-sorted text query.

Runs after :class:`~aisle.search.stages.hybrid.Hybrid`. When the tenant has a ranker in use
(``aisle ranker train``; see :mod:`aisle.search.ranking.store`) and ``global_configuration.ranking``
is enabled, the candidates the hybrid stage fused (or, without vectors, the first
``ranking.candidates`` lexical hits) are scored by the ranker on the features of
:mod:`aisle.search.ranking.features`, and the page is cut from that order. A ranker learned from clicks
reorders only the first ``rerank_depth`` candidates of the order the pipeline serves without it (what
its log's shoppers were shown, the only rows it has labels for); the rest follow in that order
(:meth:`~aisle.search.ranking.store.Ranker.order`). ``total`` and facets are
unchanged: the ranker reorders, it does not add or remove matches.

Without a ranker store (``Rerank()``) the stage does nothing; the search engine gives it the tenants'
rankers (:func:`aisle.search.pipeline.default_stages`).
"""

from __future__ import annotations

import numpy as np

from aisle.search.context import Hit, SearchContext
from aisle.search.ranking.behaviour import BEHAVIOUR_FEATURES, with_behaviour
from aisle.search.ranking.features import FEATURES, candidate_features
from aisle.search.ranking.store import Ranker, RankerNotFound, RankerStore
from aisle.search.stages.retrieve import lexical_candidates

COMPUTED_WITH_BEHAVIOUR: tuple[str, ...] = FEATURES + BEHAVIOUR_FEATURES
"""The columns a search computes for a ranker that uses the behaviour features."""


class Rerank:
    """The learned reranking stage (see module docstring); ``rankers`` None makes it a no-op."""

    def __init__(self, rankers: RankerStore | None = None) -> None:
        self.rankers = rankers

    def candidate_depth(self, ctx: SearchContext) -> int:
        """How many lexical hits this stage may read for ``ctx`` (0: it will not run). Called before
        retrieval, so it only looks at memory: loading a model here would spend retrieval's deadline."""
        cfg = ctx.config.global_.ranking
        if self.rankers is None or not cfg.enabled or ctx.query.sort != "relevance":
            return 0
        if ctx.ranker_version is not None:
            return cfg.candidates
        return cfg.candidates if self.rankers.may_be_in_use(ctx.index.tenant) else 0

    def _ranker(self, ctx: SearchContext) -> Ranker | None:
        """The search's ranker: an experiment variant's version, else the tenant's live one."""
        assert self.rankers is not None
        if ctx.ranker_version is None:
            return self.rankers.current(ctx.index.tenant)
        try:
            return self.rankers.load(ctx.index.tenant, ctx.ranker_version)
        except RankerNotFound:  # deleted under a running experiment: no reranking, as without one
            return None

    def run(self, ctx: SearchContext) -> SearchContext:
        if self.rankers is None:
            return ctx
        cfg = ctx.config.global_.ranking
        if not cfg.enabled or ctx.output.total == 0 or not ctx.reorders_within(cfg.candidates):
            return ctx
        ranker = self._ranker(ctx)
        if ranker is None:
            return ctx
        candidates = ctx.retrieval.candidates
        if candidates is None:
            candidates = lexical_candidates(ctx, cfg.candidates)
        if len(candidates.ords) == 0:
            return ctx
        computed = COMPUTED_WITH_BEHAVIOUR if ranker.uses_behaviour else FEATURES
        columns = ranker.columns(computed)
        if columns is None:  # trained on a feature no longer computed (logged once): the pipeline's order
            return ctx
        features = candidate_features(ctx, candidates)
        if ranker.uses_behaviour:
            product_ids = ctx.index.product_ids()
            ids = [product_ids[o] for o in candidates.ords.tolist()]
            query = ctx.graph.normalized if ctx.graph is not None else ""
            features = with_behaviour(features, self.rankers.behaviour.current(ctx.index.tenant), query, ids)
        if not isinstance(columns, slice):  # a model of other features than today's: its own columns
            features = np.ascontiguousarray(features[:, columns])
        order, scores = ranker.order(features, candidates.served)
        offset, size = ctx.window()
        ctx.output.hits = [
            Hit(int(candidates.ords[i]), float(scores[i])) for i in order[offset : offset + size]
        ]
        assert ctx.graph is not None
        ctx.graph.stages_tried.append({"stage": f"rerank-v{ranker.version}", "hits": len(candidates.ords)})
        return ctx
