"""The search pipeline on the real fashion and Home Depot catalogs (in-process)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from aisle.core.errors import BadRequest
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import TypoConfig
from aisle.search.evaluation import evaluate, load_judgments
from aisle.search.indexes import IndexRegistry
from aisle.search.model import FilterSpec
from aisle.search.pipeline import SearchPipeline
from aisle.search.query import SearchQuery
from aisle.search.spelling import typo_distance


@pytest.fixture(scope="module")
def engine(demo_env):  # type: ignore[no-untyped-def]
    tenants = Tenants(demo_env.store, ttl=60)
    registry = IndexRegistry(tenants, demo_env.data_dir)
    pipeline = SearchPipeline(budget_s=5)

    def search(query: str, tenant: str = "fashion", **kw):  # type: ignore[no-untyped-def]
        return pipeline.search(registry.get(tenant), tenants.config(tenant), SearchQuery(query, **kw))

    search.tenants = tenants  # type: ignore[attr-defined]
    search.registry = registry  # type: ignore[attr-defined]
    return search


def test_red_nike_running_shoes_ranks_red_nike_shoes_first(engine) -> None:  # type: ignore[no-untyped-def]
    result = engine("red nike running shoes", facets=["brand", "color"])
    top = result.products[0]
    assert top["brand"] == "Nike" and top["color"] == "Red" and "Shoes" in top["category"]
    assert all(p["brand"] == "Nike" for p in result.products[:10])
    assert {"brand", "color"} <= set(result.facets)
    assert result.facets["brand"][0].value == "Nike"
    fields = {a.field for a in result.query_graph.attributes}
    assert {"brand", "color", "category"} <= fields


def test_strict_stage_answers_when_all_terms_match_enough(engine) -> None:  # type: ignore[no-untyped-def]
    result = engine("adidas black tshirt")
    assert result.query_graph.stage == "strict"
    assert result.products, "the strict stage answered nothing"
    assert all(p["brand"] == "ADIDAS" and p["color"] == "Black" for p in result.products)


def test_misspelt_brand_is_corrected_and_shown(engine) -> None:  # type: ignore[no-untyped-def]
    result = engine("nkie shoes")
    assert [(c.original, c.corrected) for c in result.query_graph.corrections] == [("nkie", "nike")]
    assert result.products[0]["brand"] == "Nike"


def test_known_words_are_never_corrected(engine) -> None:  # type: ignore[no-untyped-def]
    assert engine("puma shoes").query_graph.corrections == []


def test_typo_stage_when_earlier_stages_have_too_few_hits(engine) -> None:  # type: ignore[no-untyped-def]
    tenants, registry = engine.tenants, engine.registry
    config = tenants.config("fashion")
    stages = config.global_.stages.model_copy(update={"min_hits": 10**6})
    greedy = dataclasses.replace(config, global_=config.global_.model_copy(update={"stages": stages}))
    result = SearchPipeline(budget_s=5).search(registry.get("fashion"), greedy, SearchQuery("leather wallet"))
    assert [s["stage"] for s in result.query_graph.stages_tried] == ["strict", "relaxed", "typo"]
    assert result.total >= engine("leather wallet").total


def test_typo_distance_grows_with_term_length() -> None:
    typo = TypoConfig()
    assert [typo_distance(t, typo) for t in ["tee", "shoe", "sandal", "sneakers", "x2000"]] == [
        0,
        1,
        1,
        2,
        0,
    ]


def test_filters_or_within_a_field_and_price_range(engine) -> None:  # type: ignore[no-untyped-def]
    result = engine(
        "shoes",
        size=50,
        filters=[
            FilterSpec(field="brand", value=["nike", "Puma"]),
            FilterSpec(field="price", value={"lt": 2000}),
        ],
    )
    assert result.total > 0
    assert {p["brand"] for p in result.products} <= {"Nike", "Puma"}
    assert all(p["price"] < 2000 for p in result.products)
    applied = {f.field: f for f in result.query_graph.filters}
    assert applied["brand"].values == ["Nike", "Puma"]


@pytest.mark.parametrize(
    ("spec", "code"),
    [
        (FilterSpec(field="nope", value="x"), "filter_unknown"),
        (FilterSpec(field="description", value="x"), "filter_not_allowed"),
        (FilterSpec(field="price", value="cheap"), "filter_value_invalid"),
        (FilterSpec(field="brand", value={"gt": 1}), "filter_value_invalid"),
    ],
)
def test_bad_filters_are_clear_errors(engine, spec: FilterSpec, code: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(BadRequest) as err:
        engine("shoes", filters=[spec])
    assert err.value.code == code


def test_facets_count_the_whole_match_set(engine) -> None:  # type: ignore[no-untyped-def]
    result = engine("watch", size=5, facets=["gender", "price", "category"])
    assert sum(v.count for v in result.facets["gender"]) == result.total
    assert sum(v.count for v in result.facets["price"]) == result.total
    assert result.facets["category"][0].value == "Accessories"
    drill = engine("watch", facets=["category"], filters=[FilterSpec(field="category", value="Accessories")])
    assert drill.facets["category"], "the drill-down counted no category"
    assert all(v.value.startswith("Accessories > ") for v in drill.facets["category"])


def test_unknown_facet_is_rejected(engine) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(BadRequest) as err:
        engine("shoes", facets=["nope"])
    assert err.value.code == "facet_unknown"


def test_price_sort_and_pagination(engine) -> None:  # type: ignore[no-untyped-def]
    prices = [p["price"] for p in engine("shirt", size=30, sort="price_asc").products]
    assert prices == sorted(prices)
    prices = [p["price"] for p in engine("shirt", size=30, sort="price_desc").products]
    assert prices == sorted(prices, reverse=True)
    both = engine("shirt", size=20).products
    assert engine("shirt", size=10, offset=10).products == both[10:]


def test_price_phrase_becomes_a_constraint(engine) -> None:  # type: ignore[no-untyped-def]
    result = engine("red nike shoes under 2000")
    assert result.query_graph.price == {"lte": 2000.0}
    assert result.products[0]["price"] <= 2000
    assert "2000" not in result.query_graph.tokens


def test_empty_query_browses(engine) -> None:  # type: ignore[no-untyped-def]
    result = engine("", size=3)
    assert result.query_graph.stage == "browse" and result.total == 44441


def test_unit_spellings_are_normalised(engine) -> None:  # type: ignore[no-untyped-def]
    a = engine('1/2" pvc pipe', tenant="homedepot").products
    b = engine("1/2 in. pvc pipe", tenant="homedepot").products
    assert [p["id"] for p in a] == [p["id"] for p in b]


def test_home_depot_ndcg_beats_plain_bm25_on_a_sample(engine, shared_data: Path) -> None:  # type: ignore[no-untyped-def]
    qrels = load_judgments(shared_data / "homedepot" / "judgments_dev.csv")
    sample = dict(sorted(qrels.items())[::10])  # every tenth query: ~600 queries
    report = evaluate(
        lambda q: [p["id"] for p in engine(q.text, tenant="homedepot", size=q.size).products], sample
    )
    assert report.errors == 0
    assert report.ndcg10 > 0.38, report.ndcg10


def test_result_json_is_the_models_json(engine) -> None:  # type: ignore[no-untyped-def]
    """The search route sends ``json_bytes()``: the same document ``model_dump(by_alias=True)`` gives,
    with and without the external service's fields, and the result still validates as the model."""
    import orjson

    from aisle.search.model import SearchResult

    result = engine("blue denim jeans", facets=["brand", "color", "price"], size=7)
    assert result.products and result.facets["brand"]
    assert result.json_bytes() == orjson.dumps(result.model_dump(by_alias=True))
    assert SearchResult.model_validate_json(result.json_bytes()) == SearchResult.model_validate(
        result.model_dump(by_alias=True)
    )
    external = result.model_copy(update={"corrected_query": "blue jeans", "attribution_token": "t-1"})
    document = orjson.loads(external.json_bytes())
    assert document == orjson.loads(orjson.dumps(external.model_dump(by_alias=True)))
    assert (document["correctedQuery"], document["attributionToken"]) == ("blue jeans", "t-1")
