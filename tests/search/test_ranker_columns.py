"""A stored ranker reads the feature columns it was trained on, by name, whatever the code computes now.

The feature set grows (issue 43): a model trained on fewer features than today's must be fed its own
columns, in its own order, and one trained on a feature no longer computed must not be fed others.
"""

from __future__ import annotations

import lightgbm
import numpy as np
import pytest

from aisle.core.storage import BlobStore
from aisle.search.pipeline import SearchPipeline, default_stages
from aisle.search.query import SearchQuery
from aisle.search.ranking.features import FEATURES
from aisle.search.ranking.store import RankerRecord, RankerStore
from aisle.search.stages.retrieve import lexical_candidates


def _model(names: list[str], decisive: int, seed: int = 0) -> str:
    """A LambdaMART model on ``names`` (values 0..100) whose order follows column ``decisive``, higher
    first."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 100, size=(400, len(names)))
    y = np.digitize(x[:, decisive], [33, 66])
    params = {"objective": "lambdarank", "verbose": -1, "min_data_in_leaf": 5, "num_threads": 1}
    data = lightgbm.Dataset(x, y, group=[20] * 20, feature_name=names)
    return lightgbm.train(params, data, 20).model_to_string()


def _record(features: list[str]) -> RankerRecord:
    return RankerRecord(version=0, features=features, queries=20, candidates=400)


def test_a_ranker_picks_its_columns_by_name(any_blob_store: BlobStore) -> None:
    store = RankerStore(any_blob_store, check_every=0)
    names = ["coverage", "bm25"]  # not in FEATURES' order, and fewer
    store.save("shop", _model(names, decisive=0), _record(names))
    ranker = store.current("shop")
    assert ranker is not None
    columns = ranker.columns(FEATURES)
    assert isinstance(columns, np.ndarray)
    assert [FEATURES[j] for j in columns.tolist()] == names
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 100, size=(30, len(FEATURES))).astype(np.float32)
    picked = ranker.score(np.ascontiguousarray(x[:, columns]))
    assert np.array_equal(picked, ranker.score(x[:, [FEATURES.index(n) for n in names]].copy()))
    # it ranks by coverage, the column it learned from, not by the first column of today's matrix
    coverage = x[:, FEATURES.index("coverage")]
    assert np.corrcoef(picked, coverage)[0, 1] > 0.8

    full = store.save("shop", _model(list(FEATURES), decisive=3), _record(list(FEATURES)))
    assert store.load("shop", full.version).columns(FEATURES) == slice(None)  # no copy per search
    # a record saved without names: the names LightGBM kept in the model
    unnamed = store.save("shop", _model(names, decisive=0), _record([]))
    assert store.load("shop", unnamed.version).columns(FEATURES).tolist() == columns.tolist()  # type: ignore[union-attr]
    gone = store.save("shop", _model(["bm25", "no_longer_computed"], decisive=1), _record([]))
    assert store.load("shop", gone.version).columns(FEATURES) is None


@pytest.fixture
def served_ranker(homedepot):  # type: ignore[no-untyped-def]
    """Put a model in use for the Home Depot tenant; the pointer is cleared afterwards."""
    tenants, _ = homedepot
    store = RankerStore(tenants.store, check_every=0)

    def use(names: list[str], decisive: int) -> int:
        return store.save("homedepot", _model(names, decisive), _record(names)).version

    yield use
    store.use("homedepot", None)


def test_a_ranker_of_features_no_longer_computed_keeps_the_pipelines_order(homedepot, served_ranker) -> None:  # type: ignore[no-untyped-def]
    tenants, index = homedepot
    config = tenants.config("homedepot")
    plain = SearchPipeline(budget_s=5.0)
    reranked = SearchPipeline(default_stages(rankers=RankerStore(tenants.store, check_every=0)), budget_s=5.0)
    query = SearchQuery("cordless drill", size=10)
    served_ranker(["lexical_rank", "no_longer_computed"], decisive=1)
    kept = reranked.search(index, config, query)
    assert [p["id"] for p in kept.products] == [p["id"] for p in plain.search(index, config, query).products]
    assert not any(str(s["stage"]).startswith("rerank") for s in kept.query_graph.stages_tried)
    # a model of fewer features than today's still reranks, on its own columns: it puts deep lexical hits
    # first (read from any other column, every candidate would look alike and keep its place)
    version = served_ranker(["coverage", "lexical_rank"], decisive=1)
    ctx = reranked.run(index, config, query)
    assert ctx.graph is not None and ctx.graph.stages_tried[-1]["stage"] == f"rerank-v{version}"
    lexical = [int(o) for o in lexical_candidates(ctx, 100).ords]
    assert len(lexical) == 100
    ranks = [lexical.index(hit.ord) for hit in ctx.output.hits]
    assert min(ranks) >= 33, ranks
