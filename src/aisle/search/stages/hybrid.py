"""Hybrid retrieval: the lexical (BM25) candidates and the nearest products by MiniLM embedding, fused.

Runs after :class:`~aisle.search.stages.retrieve.Retrieve` for relevance-sorted text queries when the
tenant's ``global_configuration.hybrid`` is enabled and its text vectors are built. The first
``candidates`` lexical hits and those of the ``neighbours`` nearest products that pass the request
filters and rule exclusions are fused by reciprocal rank fusion, ``sum_i w_i / (k + rank_i)`` (Cormack,
Clarke & Buettcher 2009, k = 60), or by a score blend ``(1 - a) * bm25 / max bm25 + a * cosine``; the
page is cut from the fused list. Nearest products that matched no lexical stage join only when the
lexical stage that answered is one of ``expand_stages`` (by default when not every query term matched),
and they add to ``total`` (facets still count the lexical matches), but only those whose cosine to the
query reaches the tenant's similarity floor (``hybrid.min_similarity``, by default calibrated on its
catalog: :mod:`aisle.vectors.similarity_floor`), so a query with no close product answers no results;
``queryGraph.hybrid_floor`` gives the floor and how many nearest products fell below it. When no word of
the query matched, the query is embedded with MiniLM (a few milliseconds; it tells a real query from a
keyboard mash better than the static encoder) and compared with MiniLM's floor. With a blend and no
learned ranker after it, the nearest-neighbour search is skipped when no such product could reach the
page (see :func:`extras_may_reach_page`; on the Home Depot dev queries, 9 of 10 partial matches),
and ``total`` then counts the lexical matches only. The fused list is left in
``ctx.retrieval.candidates`` for the learned ranker (:mod:`aisle.search.stages.rerank`). The lexical
candidates come from retrieval's own search (:attr:`~aisle.search.context.Retrieval.candidate_depth`).

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
from aisle.search.model import HybridFloor
from aisle.search.query.terms import with_filter
from aisle.search.stages.retrieve import lexical_candidates
from aisle.vectors.search import VectorSearch
from aisle.vectors.similarity_floor import cached_null_vectors, floor_of, static_null_vectors
from aisle.vectors.store import VectorIndexMissing, VectorsBuilding
from aisle.vectors.table import VectorTable

# the largest cosine of two unit vectors, with float32 rounding: the bound of the nearest-neighbour skip
COSINE_CEILING = 1.001
# HNSW's ef when the nearest products only add to the lexical candidates (a partial match): Home Depot dev
# NDCG@10 was 0.4549 at the index's 64 and at 32 or 16 alike (in process, the make run demo with its
# ranker), and a graph search at 32 costs about two thirds of one at 64. A query no word matched (the
# nearest products are the whole answer) searches at the index's own ef.
SUPPLEMENT_EXPANSION = 32


class Hybrid:
    """The hybrid retrieval stage (see module docstring); ``vectors`` None makes it a no-op.

    ``filter_rows`` evaluates the request filters for the nearest-neighbour leg (shared with the
    engine's vector search, so both use one cache).
    """

    def __init__(self, vectors: VectorSearch | None = None, filter_rows: FilterRows | None = None) -> None:
        self.vectors = vectors
        self.filter_rows = filter_rows or FilterRows()

    def candidate_depth(self, ctx: SearchContext) -> int:
        """How many lexical hits this stage will read for ``ctx`` (0: it will not run). Called before
        retrieval, so it only looks at memory: loading a table here would spend retrieval's deadline."""
        cfg = ctx.config.global_.hybrid
        if self.vectors is None or not cfg.enabled or ctx.query.sort != "relevance":
            return 0
        return 0 if self.vectors.store.known_missing(ctx.index.tenant) else cfg.candidates

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
        lex_ords, lex_scores = lexical.ords, lexical.lexical
        start = time.perf_counter()
        # no word matched: the nearest products are the whole answer, judged by MiniLM (module docstring)
        encoder = "minilm" if not len(lex_ords) or table.query is None else cfg.query_encoder
        text = ctx.graph.normalized or ctx.understanding.text
        query_vec = vectors.encode_query(table, text, encoder)
        add_timing("embed", time.perf_counter() - start)  # part of the hybrid stage's time
        row_keys = vectors.row_keys(table, index.catalog_rows())
        n_lex = len(lex_ords)
        cos, embeddings, has = _cosines(table, row_keys[lex_ords], query_vec)
        extra: list[int] = []
        if ctx.graph.stage in cfg.expand_stages and cfg.neighbours > 0:
            offset, size = ctx.window()
            if (
                ctx.retrieval.candidates_reranked
                or cfg.method != "blend"  # RRF ranks the neighbours among themselves: always look
                or extras_may_reach_page(lex_scores, cos, has, cfg.blend_weight, offset + size)
            ):
                extra = self._nearest(ctx, table, query_vec, set(lex_ords.tolist()))
        ords = lex_ords
        if extra:
            more = np.asarray(extra, dtype=np.int64)
            more_cos, more_embeddings, more_has = _cosines(table, row_keys[more], query_vec)
            floor = self._floor(ctx, table, encoder)
            close = more_has & (more_cos >= floor.floor)
            floor.below = int(len(more) - close.sum())
            ctx.graph.hybrid_floor = floor
            more, more_cos, more_has, more_embeddings = (
                more[close],
                more_cos[close],
                more_has[close],
                more_embeddings[close],
            )
            extra = more.tolist()
            ords = np.concatenate([lex_ords, more])
            cos, has = np.concatenate([cos, more_cos]), np.concatenate([has, more_has])
            embeddings = np.concatenate([embeddings, more_embeddings])
        if not len(ords):  # no word matched and no product is close: no results
            ctx.graph.hybrid = "used"
            return ctx
        lex_full = np.full(len(ords), np.nan, dtype=np.float32)
        lex_full[:n_lex] = lex_scores
        cosine = np.where(has, cos, np.nan).astype(np.float32)
        if cfg.method == "rrf":
            fused = np.zeros(len(ords), dtype=np.float64)
            fused[:n_lex] += 1.0 / (cfg.rrf_k + 1 + np.arange(n_lex))
            vec_rank = np.empty(len(ords), dtype=np.int64)
            vec_rank[np.argsort(-cos, kind="stable")] = np.arange(len(ords))
            fused += np.where(has, cfg.vector_weight / (cfg.rrf_k + 1 + vec_rank), 0.0)
        else:
            fused = _blend(lex_scores, cos, has, cfg.blend_weight)
        order = np.argsort(-fused, kind="stable")
        ctx.retrieval.candidates = Candidates(ords, lex_full, cosine, embeddings, served=order)
        offset, size = ctx.window()
        page = order[offset : offset + size]
        ctx.output.hits = [Hit(int(ords[i]), float(fused[i])) for i in page]
        ctx.output.total += len(extra)
        ctx.retrieval.vector_only = len(extra)
        ctx.graph.stages_tried.append({"stage": f"hybrid-{cfg.method}", "hits": len(ords)})
        ctx.graph.hybrid = "used"
        return ctx

    def _floor(self, ctx: SearchContext, table: VectorTable, encoder: str) -> HybridFloor:
        """The similarity floor a nearest product must reach for a query embedded by ``encoder``: the
        tenant's ``hybrid.min_similarity`` when set, else the table's calibrated one
        (:mod:`aisle.vectors.similarity_floor`)."""
        configured = ctx.config.global_.hybrid.min_similarity
        if configured is not None:
            return HybridFloor(floor=configured, encoder=encoder, source="configured")
        assert self.vectors is not None
        vectors = self.vectors
        static = table.query

        def null_vectors() -> np.ndarray:
            if encoder == "static" and static is not None:
                return static_null_vectors(static.encode)
            return cached_null_vectors(vectors.store.data_dir, lambda: vectors.encoder)

        value = floor_of(table.path, encoder, table.ann, null_vectors)
        return HybridFloor(floor=value, encoder=encoder, source="calibrated")

    def _nearest(
        self, ctx: SearchContext, table: VectorTable, query_vec: np.ndarray, seen: set[int]
    ) -> list[int]:
        """Catalog rows of the tenant's nearest products to ``query_vec`` that are not in ``seen`` and
        pass the request filters, rule filters and exclusions, nearest first: ``neighbours`` of them
        looked up, or ``candidates`` when more and no word matched (``seen`` empty: the nearest products
        are then the whole answer, pages past the first included)."""
        assert self.vectors is not None
        index, cfg = ctx.index, ctx.config.global_.hybrid
        allowed = None
        if ctx.retrieval.filters:
            allowed = self.vectors.mask(index.tenant, self.filter_rows.select(index, ctx.retrieval.filters))
        depth = cfg.neighbours if seen else max(cfg.neighbours, cfg.candidates)
        near = table.ann.search(query_vec, depth, allowed, expansion=SUPPLEMENT_EXPANSION if seen else None)
        fresh: dict[str, int] = {}  # id -> catalog row, each id looked up once (a hash each)
        for key in near.keys:
            pid = table.ids[int(key)]
            row = index.ord_by_id.get(pid, -1) if pid is not None else -1
            if row >= 0 and row not in seen:
                fresh[pid] = row  # type: ignore[index]
        return self._admissible(ctx, fresh)

    @staticmethod
    def _admissible(ctx: SearchContext, rows: dict[str, int]) -> list[int]:
        """The catalog rows of ``rows`` (id -> row) that pass the request filters and are not hidden,
        in input order."""
        if not rows:
            return []
        index = ctx.index
        if ctx.retrieval.filter_query is None and ctx.merchandising.exclude_query is None:  # nothing to pass
            return list(rows.values())
        query = with_filter(
            tantivy.Query.term_set_query(index.schema, "id", list(rows)),
            ctx.retrieval.filter_query,
            exclude=ctx.merchandising.exclude_query,
        )
        found = index.searcher.search(query, len(rows)).hits
        passing = set(index.ords(found)) if found else set()
        return [row for row in rows.values() if row in passing]


def _cosines(table: VectorTable, keys: np.ndarray, query_vec: np.ndarray) -> tuple[np.ndarray, ...]:
    """For table ``keys`` (n,) int64, -1 for a product without a vector: (cosine (n,) float32, -1
    where there is no vector; embeddings (n, d) float32, zero rows there; has (n,) bool)."""
    has = keys >= 0
    cos = np.full(len(keys), -1.0, dtype=np.float32)
    embeddings = np.zeros((len(keys), query_vec.shape[0]), dtype=np.float32)
    if has.any():
        embeddings[has] = table.ann.rows(keys[has])
        cos[has] = embeddings[has] @ query_vec
    return cos, embeddings, has


def _blend(lexical: np.ndarray, cos: np.ndarray, has: np.ndarray, weight: float) -> np.ndarray:
    """``(1 - weight) * lexical / max lexical + weight * cosine``, float64 of ``len(cos)``: the
    ``lexical`` (n,) scores are the first n candidates' (the others have none and count 0), a missing
    vector counts 0, and the maximum is taken as 1 when no lexical score is positive."""
    fused = np.where(has, weight * cos.astype(np.float64), 0.0)
    if len(lexical):
        lex = lexical.astype(np.float64)
        top = float(lex.max())
        fused[: len(lex)] += (1.0 - weight) * lex / (top if top > 0 else 1.0)
    return fused


def extras_may_reach_page(
    lex_scores: np.ndarray, lex_cos: np.ndarray, lex_has: np.ndarray, weight: float, need: int
) -> bool:
    """Whether a product no query term matched could still be among the first ``need`` of a blend.

    ``lex_scores``, ``lex_cos``, ``lex_has`` (n,): the lexical candidates' scores, cosines and whether
    each has a vector. Such a product's fused score is ``weight * cosine <= weight`` (unit vectors;
    :data:`COSINE_CEILING` allows for rounding), so when the ``need``-th lexical product already fuses
    to at least ``weight`` (the stable sort puts lexical ties first), a nearest-neighbour search cannot
    change the first ``need`` and is skipped.
    """
    if len(lex_scores) < need:
        return True
    fused = _blend(lex_scores, lex_cos, lex_has, weight)
    bar = float(np.partition(fused, len(fused) - need)[len(fused) - need])  # the need-th largest
    return bar < weight * COSINE_CEILING
