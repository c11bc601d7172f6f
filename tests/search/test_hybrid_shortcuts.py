"""Work the search pipeline skips must not change what it answers.

Retrieval fetches the candidates the hybrid stage reads in its own search (``candidate_depth``), and the
hybrid stage skips its nearest-neighbour search when no product outside the lexical matches could reach
the page of a blend. Both are checked against the long way round on the same index.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from tests.support.vectors import MiniTenant, mini_fashion

from aisle.core.storage import open_blob_store
from aisle.core.tenancy import TenantConfig, Tenants
from aisle.search.context import SearchContext
from aisle.search.index.reader import TenantIndex
from aisle.search.indexes import IndexRegistry
from aisle.search.pipeline import SearchPipeline, default_stages
from aisle.search.query import SearchQuery
from aisle.search.ranking.store import RankerStore
from aisle.search.stages.hybrid import Hybrid, extras_may_reach_page
from aisle.search.stages.rerank import Rerank
from aisle.search.stages.retrieve import lexical_candidates
from aisle.vectors.search import VectorSearch
from aisle.vectors.store import VectorIndexMissing, VectorStore

# partial matches (the relaxed and typo stages), where the hybrid stage may add products
QUERIES = [
    "timepiece for my wrist",
    "blue shirt for the beach",
    "black leather watch strap",
    "red cotton tshirt evening",
    "white sports shoes running",
    "casual men summer",
    "women handbag brown",
]


class ForceDepth:
    """A stage that only asks retrieval for ``depth`` candidates (so its one search fetches them); it
    sets the depth itself too, as the pipeline sets it only for relevance-sorted pages."""

    def __init__(self, depth: int) -> None:
        self.depth = depth

    def candidate_depth(self, ctx: SearchContext) -> int:
        return self.depth

    def run(self, ctx: SearchContext) -> SearchContext:
        ctx.retrieval.candidate_depth = self.depth
        return ctx


class ForceNearest:
    """Tells the hybrid stage a ranker reads its candidates, so it always searches the neighbours."""

    def run(self, ctx: SearchContext) -> SearchContext:
        ctx.retrieval.candidates_reranked = True
        return ctx


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> MiniTenant:
    return mini_fashion(tmp_path_factory.getbasetemp() / "shortcuts-mini", shared_data, images=False)


@pytest.fixture(scope="module")
def setup(mini: MiniTenant) -> tuple[TenantIndex, TenantConfig, VectorSearch]:
    tenants = Tenants(open_blob_store(mini.storage_url), ttl=0)
    index = IndexRegistry(tenants, mini.data_dir).get("fashion")
    return index, tenants.config("fashion"), VectorSearch(VectorStore(mini.data_dir))


def _ids(ctx: SearchContext) -> list[str]:
    return [ctx.index.rows[h.ord]["id"] for h in ctx.output.hits]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    query=st.sampled_from([*QUERIES, "watch", "shirt", "men"]),
    offset=st.integers(0, 30),
    size=st.integers(0, 25),
)
def test_retrieval_keeps_the_candidates_it_fetched_without_changing_the_page(
    setup: tuple[TenantIndex, TenantConfig, VectorSearch], query: str, offset: int, size: int
) -> None:
    index, config, _ = setup
    plain = SearchPipeline(default_stages(), budget_s=30.0).run(
        index, config, SearchQuery(query, size=size, offset=offset)
    )
    stages = (ForceDepth(50), *default_stages())
    deep = SearchPipeline(stages, budget_s=30.0).run(
        index, config, SearchQuery(query, size=size, offset=offset)
    )
    assert _ids(deep) == _ids(plain)
    assert [h.score for h in deep.output.hits] == pytest.approx([h.score for h in plain.output.hits])
    assert deep.output.total == plain.output.total
    fetched_now = plain.retrieval.candidate_depth == 0 and deep.retrieval.lexical is not None
    assert fetched_now == (size > 0 and offset + size < 50 and deep.output.total > 0)
    for n in (1, 10, 50):  # the kept candidates are what a fresh search finds
        kept, fresh = lexical_candidates(deep, n), lexical_candidates(plain, n)
        assert kept.ords.tolist() == fresh.ords.tolist()
        assert kept.lexical.tolist() == pytest.approx(fresh.lexical.tolist())


def test_a_price_sort_fetches_only_its_page(setup: tuple[TenantIndex, TenantConfig, VectorSearch]) -> None:
    index, config, _ = setup
    stages = (ForceDepth(50), *default_stages())
    ctx = SearchPipeline(stages, budget_s=30.0).run(
        index, config, SearchQuery("shirt", size=5, sort="price_asc")
    )
    assert ctx.retrieval.lexical is None and len(ctx.output.hits) == 5


@pytest.mark.parametrize("weight", [0.2, 0.5, 0.8])
@pytest.mark.parametrize("size", [1, 3, 5, 10, 20])
def test_skipping_the_neighbour_search_never_changes_the_page(
    setup: tuple[TenantIndex, TenantConfig, VectorSearch], size: int, weight: float
) -> None:
    index, config, vectors = setup
    hybrid = config.global_.hybrid.model_copy(update={"blend_weight": weight})
    config = dataclasses.replace(config, global_=config.global_.model_copy(update={"hybrid": hybrid}))
    quick = SearchPipeline(default_stages(vectors=vectors), budget_s=30.0)
    always = SearchPipeline((ForceNearest(), *default_stages(vectors=vectors)), budget_s=30.0)
    skipped = 0
    for query in QUERIES:
        a = quick.run(index, config, SearchQuery(query, size=size))
        b = always.run(index, config, SearchQuery(query, size=size))
        assert a.graph is not None and a.graph.hybrid == "used"
        assert _ids(a) == _ids(b), query
        assert [h.score for h in a.output.hits] == pytest.approx([h.score for h in b.output.hits])
        if (
            a.graph.stage in config.global_.hybrid.expand_stages
            and a.retrieval.vector_only == 0 < b.retrieval.vector_only
        ):
            skipped += 1
            assert (
                a.output.total == b.output.total - b.retrieval.vector_only
            )  # total counts only the neighbours looked up
    if size <= 5 and weight == 0.2:
        assert skipped > 0  # the shortcut is exercised, not only the long way


def test_the_hybrid_stage_reads_the_depth_it_asks_for(
    setup: tuple[TenantIndex, TenantConfig, VectorSearch],
) -> None:
    index, config, vectors = setup
    ctx = SearchPipeline(default_stages(vectors=vectors), budget_s=30.0).run(
        index, config, SearchQuery("shirt", size=5)
    )
    assert (
        ctx.retrieval.candidate_depth == config.global_.hybrid.candidates
        and ctx.retrieval.lexical is not None
    )
    assert not ctx.retrieval.candidates_reranked
    assert Hybrid(None).candidate_depth(ctx) == 0


def test_a_skip_is_only_taken_when_no_unmatched_product_could_reach_the_page() -> None:
    """Whenever the worst case (unmatched products as near as can be) puts one on the page, the stage
    must not skip; and the run must have seen both answers, so the check is not met only vacuously."""
    answers: Counter[bool] = Counter()

    @settings(max_examples=300, deadline=None)
    @given(
        scores=st.lists(st.floats(0.0, 50.0), min_size=1, max_size=40),
        data=st.data(),
        weight=st.sampled_from([0.0, 0.1, 0.2, 0.5, 0.8, 1.0]),
        need=st.integers(1, 45),
    )
    def check(scores: list[float], data: st.DataObject, weight: float, need: int) -> None:
        n = len(scores)
        cos = np.asarray(data.draw(st.lists(st.floats(-1.0, 1.0), min_size=n, max_size=n)), dtype=np.float32)
        has = np.asarray(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
        lex = np.asarray(scores, dtype=np.float32)
        may_reach = bool(extras_may_reach_page(lex, cos, has, weight, need))
        answers[may_reach] += 1
        # the worst case: unmatched products as near as can be (cosine 1), after the lexical ones
        extra = 5
        top = float(lex.max()) if lex.max() > 0 else 1.0
        fused = np.concatenate(
            [(1 - weight) * lex / top + weight * np.where(has, cos, 0.0), np.full(extra, weight)]
        )
        first = np.argsort(-fused, kind="stable")[:need]
        reaches = bool((first >= n).any())
        note(f"may_reach={may_reach} reaches={reaches}")
        assert may_reach or not reaches

    check()
    assert answers[True] > 0 and answers[False] > 0, answers  # both the skip and the long way were tried


def test_asking_for_candidates_loads_nothing_before_retrieval(
    setup: tuple[TenantIndex, TenantConfig, VectorSearch], mini: MiniTenant, tmp_path: Path
) -> None:
    """The depth is asked before retrieval: loading a table or a model there would spend retrieval's
    deadline (a search then stopped after its strict stage and answered nothing)."""
    index, config, _ = setup
    store = VectorStore(mini.data_dir)
    cold = SearchPipeline(default_stages(vectors=VectorSearch(store)), budget_s=30.0)
    ctx = SearchContext.start(index, config, SearchQuery("shirt", size=5))
    hybrid = next(s for s in cold.stages if isinstance(s, Hybrid))
    assert hybrid.candidate_depth(ctx) == config.global_.hybrid.candidates
    assert store.entry_count() == 0  # not loaded by the question
    missing = VectorStore(tmp_path / "empty")
    with pytest.raises(VectorIndexMissing):
        missing.table("fashion")
    assert Hybrid(VectorSearch(missing)).candidate_depth(ctx) == 0  # known missing: no deep fetch

    rankers = RankerStore(open_blob_store(mini.storage_url))
    rerank = Rerank(rankers)
    assert rerank.candidate_depth(ctx) == config.global_.ranking.candidates  # not looked at yet
    assert rankers.current("fashion") is None
    assert rerank.candidate_depth(ctx) == 0  # the last look found no ranker


def test_a_ranker_is_trained_on_the_candidates_it_reorders_when_served(
    setup: tuple[TenantIndex, TenantConfig, VectorSearch],
) -> None:
    """The trainer collects what a served ranker reads: the hybrid stage looks up the nearest products
    on every partial match, as it does ahead of a rerank stage; collected without one (``as_served``
    False, how rankers were trained before) it skips them where none could reach the page."""
    from aisle.search.ranking.features import FEATURES
    from aisle.search.training.ranker import collect

    index, config, vectors = setup
    candidates = config.global_.ranking.candidates
    stages = default_stages(vectors=vectors)
    pipeline = SearchPipeline(stages, budget_s=30.0)
    served = SearchPipeline((ForceDepth(candidates), ForceNearest(), *stages), budget_s=30.0)
    some_product = index.product_ids()[0]
    qrels = {q: {some_product: 3.0} for q in QUERIES}
    as_served = collect(pipeline, index, config, qrels, candidates=candidates)
    before = collect(pipeline, index, config, qrels, candidates=candidates, as_served=False)
    for i, query in enumerate(as_served.queries):
        found = served.run(index, config, SearchQuery(query, size=10)).retrieval.candidates
        assert found is not None
        assert as_served.ords[i].tolist() == found.ords.tolist(), query
    lexical = FEATURES.index("lexical")  # NaN: found by the nearest-neighbour search only
    vector_only = [int(np.isnan(f[:, lexical]).sum()) for f in as_served.features]
    vector_only_before = [int(np.isnan(f[:, lexical]).sum()) for f in before.features]
    assert all(a >= b for a, b in zip(vector_only, vector_only_before, strict=True))
    assert sum(vector_only) > sum(vector_only_before)  # the lookup the collection used to skip
