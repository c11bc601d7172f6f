"""Hybrid retrieval: the lexical (BM25) candidates and the nearest products by MiniLM embedding, fused.

Runs after :class:`~aisle.search.stages.retrieve.Retrieve` for relevance-sorted text queries when the
tenant's ``global_configuration.hybrid`` is enabled and its text vectors are built. The first
``candidates`` lexical hits and the ``candidates`` nearest products (passing the request filters and
rule exclusions) are fused by reciprocal rank fusion, ``sum_i w_i / (k + rank_i)`` (Cormack, Clarke &
Buettcher 2009, k = 60), or by a score blend ``(1 - a) * bm25 / max bm25 + a * cosine``; the page is
cut from the fused list. Nearest products that matched no lexical stage join only when the lexical
stage that answered is one of ``expand_stages`` (by default when not every query term matched), and
they add to ``total`` (facets still count the lexical matches). The fused list is left in
``ctx.candidates`` for the learned ranker (:mod:`aisle.search.stages.rerank`).

Without vectors (``Hybrid()``, as :func:`~aisle.search.pipeline.default_stages` builds it when given
none, or a tenant without vectors) the stage does nothing; the search engine gives it the process's
vector search (:mod:`aisle.search.engine`). ``queryGraph.hybrid`` says what happened when the tenant
enables hybrid retrieval: ``used``, ``building`` (its text vectors are being built in the background;
the table is picked up within the vector store's check interval once it lands, without a restart) or
``unavailable``.
"""

from __future__ import annotations

import time

import numpy as np
import tantivy

from aisle.core.timing import add_timing
from aisle.search.context import Candidates, Hit, SearchContext
from aisle.search.filter_rows import FilterRows
from aisle.search.stages.retrieve import lexical_candidates, with_filter
from aisle.vectors.search import VectorSearch
from aisle.vectors.store import VectorIndexMissing, VectorsBuilding


class Hybrid:
    """The hybrid retrieval stage (see module docstring); ``vectors`` None makes it a no-op.

    ``filter_rows`` evaluates the request filters for the nearest-neighbour leg (shared with the
    engine's vector search, so both use one cache).
    """

    def __init__(self, vectors: VectorSearch | None = None, filter_rows: FilterRows | None = None) -> None:
        self.vectors = vectors
        self.filter_rows = filter_rows or FilterRows()

    def run(self, ctx: SearchContext) -> SearchContext:
        vectors = self.vectors
        if vectors is None:
            return ctx
        cfg = ctx.config.global_.hybrid
        if not cfg.enabled or not ctx.reorders_within(cfg.candidates):
            return ctx
        assert ctx.graph is not None
        index = ctx.index
        try:
            table = vectors.store.table(index.tenant)
        except VectorIndexMissing as exc:  # lexical only, and the queryGraph says why
            ctx.graph.hybrid = "building" if isinstance(exc, VectorsBuilding) else "unavailable"
            return ctx
        lexical = lexical_candidates(ctx, cfg.candidates)
        lex_ords, lex_scores = lexical.ords.tolist(), lexical.lexical
        start = time.perf_counter()
        query_vec = vectors.encode(ctx.graph.normalized or ctx.query)
        add_timing("embed", time.perf_counter() - start)  # part of the hybrid stage's time
        expand = ctx.graph.stage in cfg.expand_stages
        extra: list[int] = []
        if expand:
            allowed = None
            if ctx.filters:
                allowed = vectors.mask(index.tenant, self.filter_rows.select(index, ctx.filters))
            near = table.ann.search(query_vec, cfg.candidates, allowed)
            near_ids = [table.ids[int(k)] for k in near.keys]
            seen = set(lex_ords)
            fresh = [i for i in near_ids if i is not None and index.ord_by_id.get(i, -1) not in seen]
            extra = self._admissible(ctx, [i for i in fresh if i in index.ord_by_id])
        ords = list(lex_ords) + extra
        if not ords:
            return ctx
        keys = np.asarray([table.key_of.get(index.rows[o]["id"], -1) for o in ords], dtype=np.int64)
        cos = np.full(len(ords), -1.0, dtype=np.float32)
        has = keys >= 0
        embeddings = np.zeros((len(ords), query_vec.shape[0]), dtype=np.float32)
        if has.any():
            embeddings[has] = table.ann.rows(keys[has])
            cos[has] = embeddings[has] @ query_vec
        n_lex = len(lex_ords)
        lex_full = np.full(len(ords), np.nan, dtype=np.float32)
        lex_full[:n_lex] = lex_scores
        cosine = np.where(has, cos, np.nan).astype(np.float32)
        ctx.candidates = Candidates(np.asarray(ords, dtype=np.int64), lex_full, cosine, embeddings)
        if cfg.method == "rrf":
            fused = np.zeros(len(ords), dtype=np.float64)
            fused[:n_lex] += 1.0 / (cfg.rrf_k + 1 + np.arange(n_lex))
            vec_rank = np.empty(len(ords), dtype=np.int64)
            vec_rank[np.argsort(-cos, kind="stable")] = np.arange(len(ords))
            fused += np.where(has, cfg.vector_weight / (cfg.rrf_k + 1 + vec_rank), 0.0)
        else:
            top = float(lex_scores.max()) if n_lex and lex_scores.max() > 0 else 1.0
            lex_norm = np.zeros(len(ords), dtype=np.float64)
            lex_norm[:n_lex] = lex_scores / top
            fused = (1.0 - cfg.blend_weight) * lex_norm + cfg.blend_weight * np.where(has, cos, 0.0)
        order = np.argsort(-fused, kind="stable")
        offset, size = ctx.window()
        page = order[offset : offset + size]
        ctx.hits = [Hit(int(ords[i]), float(fused[i])) for i in page]
        ctx.total += len(extra)
        ctx.vector_only = len(extra)
        ctx.graph.stages_tried.append({"stage": f"hybrid-{cfg.method}", "hits": len(ords)})
        ctx.graph.hybrid = "used"
        return ctx

    @staticmethod
    def _admissible(ctx: SearchContext, ids: list[str]) -> list[int]:
        """Catalog rows of ``ids`` that pass the request filters and are not hidden, in input order."""
        if not ids:
            return []
        index = ctx.index
        query = with_filter(
            tantivy.Query.term_set_query(index.schema, "id", ids), ctx.filter_query, exclude=ctx.exclude_query
        )
        found = index.searcher.search(query, len(ids)).hits
        passing = set(index.ords(found)) if found else set()
        return [index.ord_by_id[i] for i in ids if index.ord_by_id[i] in passing]
