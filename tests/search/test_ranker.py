"""The learned ranker: features, versioned storage, training from judgments and reranking in the pipeline."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import lightgbm
import numpy as np
import pytest

from aisle.core.errors import BadRequest
from aisle.core.storage import BlobStore
from aisle.search.evaluation import load_judgments
from aisle.search.pipeline import SearchPipeline, default_stages
from aisle.search.query import SearchQuery
from aisle.search.ranking.features import FEATURES, candidate_features
from aisle.search.ranking.store import RankerNotFound, RankerRecord, RankerStore
from aisle.search.stages.rerank import Rerank
from aisle.search.stages.retrieve import lexical_candidates
from aisle.search.training.ranker import train_ranker


def _tiny_model(seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(200, len(FEATURES)))
    data = lightgbm.Dataset(x, (x[:, 0] > 0).astype(int), group=[20] * 10)
    params = {"objective": "lambdarank", "verbose": -1, "min_data_in_leaf": 5, "num_threads": 1}
    return lightgbm.train(params, data, 5).model_to_string()


def _record() -> RankerRecord:
    return RankerRecord(version=0, features=list(FEATURES), queries=10, candidates=200)


def test_versions_are_immutable_and_the_pointer_switches(any_blob_store: BlobStore) -> None:
    store = RankerStore(any_blob_store, check_every=0)
    assert store.current("shop") is None
    first = store.save("shop", _tiny_model(0), _record())
    second = store.save("shop", _tiny_model(1), _record(), use=False)
    assert (first.version, second.version) == (1, 2)
    assert [r.version for r in store.versions("shop")] == [1, 2]
    assert store.in_use("shop") == 1
    current = store.current("shop")
    assert current is not None and current.version == 1
    store.use("shop", 2)
    current = store.current("shop")
    assert current is not None and current.version == 2
    scores = current.score(np.zeros((3, len(FEATURES)), dtype=np.float32))
    assert scores.shape == (3,)
    with pytest.raises(RankerNotFound):
        store.use("shop", 7)
    assert store.in_use("shop") == 2  # a failed switch changes nothing
    store.use("shop", None)
    assert store.current("shop") is None
    assert store.current("other") is None  # tenants are apart


def test_features_see_coverage_order_and_unstemmed_words(homedepot) -> None:  # type: ignore[no-untyped-def]
    tenants, index = homedepot
    ctx = SearchPipeline(budget_s=5.0).run(
        index, tenants.config("homedepot"), SearchQuery("aluminum edging", size=10)
    )
    found = lexical_candidates(ctx, 100)
    x = candidate_features(ctx, found)
    assert x.shape == (len(found.ords), len(FEATURES))
    col = {name: j for j, name in enumerate(FEATURES)}
    titles = [index.rows[o]["title"].lower() for o in found.ords.tolist()]
    for row, title in zip(x, titles, strict=True):
        words = title.replace(".", " ").split()
        assert row[col["exact_last"]] == float("edging" in words), title
        if "aluminum" in words and "edging" in words:
            assert row[col["coverage"]] == 1.0 and row[col["exact_coverage"]] == 1.0
    # "edge" shares the stem of "edging": stemmed coverage full, unstemmed not
    edge = [i for i, t in enumerate(titles) if "aluminum" in t and " edge " in f" {t} " and "edging" not in t]
    assert edge, "the catalog has aluminum edge products"
    assert x[edge[0], col["coverage"]] == 1.0 and x[edge[0], col["exact_coverage"]] == 0.5
    assert np.all(x[:, col["lexical_rank"]] == np.arange(len(found.ords)))
    assert np.all(np.isnan(x[:, col["cosine"]]))  # no vectors in this tenant


@pytest.fixture(scope="module")
def trained(homedepot, demo_env, shared_data: Path) -> Iterator[tuple[list[str], RankerRecord]]:  # type: ignore[no-untyped-def]
    """A ranker trained on synthetic judgments: each query's relevant product is its 30th lexical hit,
    a rule BM25 never follows but the features (lexical rank) can express."""
    tenants, index = homedepot
    config = tenants.config("homedepot")
    queries = sorted(load_judgments(shared_data / "homedepot" / "judgments_dev.csv"))[:900:3]
    plain = SearchPipeline(budget_s=5.0)
    qrels = {}
    for query in queries:
        ctx = plain.run(index, config, SearchQuery(query, size=10))
        if ctx.retrieval.match_query is None or ctx.output.total < 40:
            continue
        qrels[query] = {index.rows[lexical_candidates(ctx, 30).ords[29]]["id"]: 3.0}
    train_q = sorted(qrels)[: len(qrels) * 2 // 3]
    record = train_ranker(
        tenants, "homedepot", demo_env.data_dir, {q: qrels[q] for q in train_q}, folds=2, rounds=60
    )
    held_out = [q for q in sorted(qrels) if q not in train_q]
    yield held_out, record
    RankerStore(tenants.store).use("homedepot", None)


def test_a_trained_ranker_learns_what_the_judgments_reward(homedepot, trained) -> None:  # type: ignore[no-untyped-def]
    tenants, index = homedepot
    held_out, record = trained
    assert len(held_out) >= 20
    assert record.version >= 1 and record.cv_ndcg10 is not None and record.folds == 2
    assert record.cv_ndcg10 > 0.5 > record.baseline_ndcg10  # held-out folds, not memorised queries
    config = tenants.config("homedepot")
    rankers = RankerStore(tenants.store, check_every=0)
    reranked = SearchPipeline(default_stages(rankers=rankers), budget_s=5.0)
    plain = SearchPipeline(budget_s=5.0)

    def thirtieth_first(pipeline: SearchPipeline, query: str) -> bool:
        ctx = pipeline.run(index, config, SearchQuery(query, size=1))
        return ctx.output.hits[0].ord == int(lexical_candidates(ctx, 30).ords[29])

    with_ranker = sum(thirtieth_first(reranked, q) for q in held_out)
    without = sum(thirtieth_first(plain, q) for q in held_out)
    assert with_ranker >= 0.6 * len(held_out) and without == 0, (with_ranker, without, len(held_out))
    graph = reranked.search(index, config, SearchQuery(held_out[0], size=5)).query_graph
    assert graph.stages_tried[-1]["stage"] == f"rerank-v{record.version}"


def test_the_ranker_only_reorders(homedepot, trained) -> None:  # type: ignore[no-untyped-def]
    tenants, index = homedepot
    held_out, _ = trained
    config = tenants.config("homedepot")
    reranked = SearchPipeline(default_stages(rankers=RankerStore(tenants.store)), budget_s=5.0)
    plain = SearchPipeline(budget_s=5.0)
    query = held_out[0]
    a = reranked.search(index, config, SearchQuery(query, size=100, facets=[]))
    b = plain.search(index, config, SearchQuery(query, size=100, facets=[]))
    assert a.total == b.total
    assert {p["id"] for p in a.products} == {p["id"] for p in b.products}
    # past the candidates, or sorted by price, or switched off: the ranker stays out
    beyond = reranked.search(index, config, SearchQuery(query, size=20, offset=100)).query_graph.stages_tried
    assert not any(str(s["stage"]).startswith("rerank") for s in beyond)
    ranking = config.global_.ranking.model_copy(update={"enabled": False})
    off = config.global_.model_copy(update={"ranking": ranking})
    graph = reranked.search(
        index, dataclasses.replace(config, global_=off), SearchQuery(query, size=5)
    ).query_graph
    assert not any(str(s["stage"]).startswith("rerank") for s in graph.stages_tried)


def test_judgments_without_catalog_products_are_refused(homedepot, demo_env) -> None:  # type: ignore[no-untyped-def]
    tenants, _ = homedepot
    before = RankerStore(tenants.store).versions("homedepot")
    with pytest.raises(BadRequest) as err:
        train_ranker(tenants, "homedepot", demo_env.data_dir, {"drill": {"no-such-id": 3.0}}, folds=0)
    assert err.value.code == "judgments_unusable"
    assert RankerStore(tenants.store).versions("homedepot") == before  # nothing written


def test_the_search_service_reranks_with_the_tenants_ranker(demo_env, trained) -> None:  # type: ignore[no-untyped-def]
    from fastapi.testclient import TestClient

    from aisle.core.config import Settings
    from aisle.services.search.app import create_app

    assert any(isinstance(s, Rerank) and s.rankers is None for s in default_stages())  # unbound by default
    held_out, record = trained
    settings = Settings(
        storage_url=demo_env.storage_url,
        data_dir=demo_env.data_dir,
        auth="off",
        predict_url="http://127.0.0.1:9",
        search_budget_ms=60_000,  # the first search opens the index and builds the ranker's token table
    )
    with TestClient(create_app(settings, preload=False)) as client:
        resp = client.post("/search", json={"query": held_out[0], "tenant": "homedepot", "size": 5})
        assert resp.status_code == 200, resp.text
        stages = [s["stage"] for s in resp.json()["queryGraph"]["stages_tried"]]
        assert stages[-1] == f"rerank-v{record.version}"


def test_the_demo_keeps_a_ranker_already_in_use(homedepot, trained, demo_env, shared_data: Path) -> None:  # type: ignore[no-untyped-def]
    from aisle.demo.ranker import train_demo_rankers

    tenants, _ = homedepot
    _, record = trained
    before = RankerStore(tenants.store).versions("homedepot")
    said: list[str] = []
    train_demo_rankers(tenants, demo_env.data_dir, shared_data, echo=said.append)
    assert said == [f"homedepot: search ranker v{record.version} in use"]
    assert RankerStore(tenants.store).versions("homedepot") == before
