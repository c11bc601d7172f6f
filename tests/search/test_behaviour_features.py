"""Behaviour features in the learned ranker: published by the analytics job, looked up when serving,
the same values in training and in the rerank stage."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.services.edit.test_train_ranker_job import PRODUCTS, WORDS, _traffic
from tests.support.recs import write_tenant

from aisle.analytics.log import ParquetLog
from aisle.behaviour.store import refresh
from aisle.core import analytics_layout as layout
from aisle.core.storage import BlobStore, open_blob_store
from aisle.core.tenancy import Tenants, tenant_scope
from aisle.core.tenant_config import Attribute
from aisle.search.pipeline import SearchPipeline, default_stages
from aisle.search.query import SearchQuery
from aisle.search.ranking.behaviour import BEHAVIOUR_FEATURES, BehaviourTables
from aisle.search.ranking.features import FEATURES
from aisle.search.ranking.store import RankerRecord, RankerStore
from aisle.search.training.ranker import DEFAULT_PARAMS, collect, fit, tenant_pipeline


@pytest.fixture
def store(tmp_path: Path) -> BlobStore:
    store = open_blob_store(f"file://{tmp_path / 'bucket'}")
    write_tenant(store, "shop", PRODUCTS, attributes=[Attribute(name="title", role="title", searchable=True)])
    _traffic(store, tmp_path, searches_per_word=40)
    refresh(ParquetLog(store, tmp_path / "cache"), "shop")
    return store


def test_the_serving_side_reads_what_the_job_writes(store: BlobStore) -> None:
    assert tenant_scope(store, "shop").exists(layout.BEHAVIOUR_POINTER)  # written where both sides look
    lookup = BehaviourTables(store).current("shop")
    assert lookup is not None and lookup.version == 1
    x = lookup.columns("drill", ["drill-4", "drill-0", "nosuch"])
    assert x.shape == (3, len(BEHAVIOUR_FEATURES))
    assert x[0, 0] > x[1, 0]  # the wanted product is clicked more per examination
    # never shown: the mean click rate per examination over every pair, and per impression over products
    assert x[1, 0] < x[2, 0] < x[0, 0] and x[2, 0] == pytest.approx(lookup.prior[0])
    assert 0 < lookup.prior[1] < 1 and x[2, 1] == pytest.approx(lookup.prior[1])
    assert x[0, 1] > x[1, 1]  # over all queries, too
    assert BehaviourTables(store).current("other") is None


def test_a_ranker_on_behaviour_features_serves_what_shoppers_click(store: BlobStore, tmp_path: Path) -> None:
    tenants = Tenants(store)
    index, config, pipeline = tenant_pipeline(tenants, "shop", tmp_path / "data")
    lookup = BehaviourTables(store).current("shop")
    judged = WORDS[: len(WORDS) // 2]  # judgments for half the words: the rest learn from behaviour alone
    qrels = {w: {f"{w}-4": 3.0, **{f"{w}-{i}": 1.0 for i in range(4)}} for w in judged}
    qs = collect(pipeline, index, config, qrels, behaviour=lookup)
    assert qs.features[0].shape[1] == len(FEATURES) + len(BEHAVIOUR_FEATURES)
    booster = fit(qs, params=DEFAULT_PARAMS | {"min_data_in_leaf": 3}, rounds=30)
    gain = dict(zip(booster.feature_name(), booster.feature_importance("gain"), strict=True))
    assert gain["qp_ctr"] > 0  # the trees do split on what shoppers clicked
    rankers = RankerStore(store, check_every=0)
    features = list(FEATURES) + list(BEHAVIOUR_FEATURES)
    rankers.save(
        "shop",
        booster.model_to_string(),
        RankerRecord(version=0, features=features, queries=6, candidates=30),
    )
    served = SearchPipeline(default_stages(rankers=rankers), budget_s=5.0)
    plain = SearchPipeline(default_stages(), budget_s=5.0)
    ids = index.product_ids()
    unjudged = WORDS[len(WORDS) // 2 :]
    for word in unjudged:
        assert ids[plain.run(index, config, SearchQuery(word)).output.hits[0].ord] != f"{word}-4"
        assert ids[served.run(index, config, SearchQuery(word)).output.hits[0].ord] == f"{word}-4", word
