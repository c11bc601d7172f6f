"""Guided search's question chooser (issue 33): the pure choice, then the stage in the pipeline on the
real fashion catalog (narrow queries, answered questions, filtered attributes, the queryGraph's why)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest
from pydantic import ValidationError

from aisle.core.follow_up_config import FollowUpConfig
from aisle.core.tenancy import TenantConfig, Tenants
from aisle.core.tenant_config import Attribute
from aisle.search.indexes import IndexRegistry
from aisle.search.model import FilterSpec, SearchResult
from aisle.search.pipeline import SearchPipeline
from aisle.search.query import SearchQuery
from aisle.search.stages.follow_up import candidate, choose, expected_gain, names_product, question_of


def _attr(name: str, **kw: Any) -> Attribute:
    return Attribute(name=name, filterable=True, facetable=True, **kw)


# -- the choice, on counts ------------------------------------------------------------------------


def test_expected_gain_is_the_offered_values_part_of_the_entropy() -> None:
    assert expected_gain([25, 25, 25, 25], 100) == pytest.approx(2.0)
    assert expected_gain([100], 100) == 0.0  # everyone has it: asking tells nothing
    assert expected_gain([50], 100) == pytest.approx(0.5)  # half answer (1 bit), half cannot
    assert expected_gain([], 0) == 0.0


def test_information_gain_picks_the_attribute_that_splits_the_matches_best() -> None:
    config = FollowUpConfig(enabled=True, max_options=6)
    total = 600
    brand = candidate(_attr("brand"), [("Nike", 540), ("Puma", 30), ("Adidas", 30)], total, config)
    color = candidate(_attr("color"), [(c, 100) for c in "ABCDEF"], total, config)
    gender = candidate(_attr("gender"), [("Men", 300), ("Women", 300)], total, config)
    chosen, reason = choose([brand, color, gender], config)
    assert reason == "asked" and chosen is color
    assert color.gain_bits == pytest.approx(math.log2(6))
    assert brand.gain_bits < gender.gain_bits < color.gain_bits
    # the baselines choose by position and by number of values, whatever the split
    assert choose([brand, color, gender], config.model_copy(update={"chooser": "first_facet"}))[0] is brand
    many = candidate(_attr("size"), [(str(i), 1) for i in range(20)] + [("L", 580)], total, config)
    assert choose([brand, color, many], config.model_copy(update={"chooser": "most_values"}))[0] is many


def test_options_are_the_most_frequent_values_at_most_max_options() -> None:
    config = FollowUpConfig(enabled=True, max_options=3)
    c = candidate(
        _attr("color"), [("Red", 5), ("Blue", 50), ("Black", 30), ("Green", 10), ("Pink", 0)], 95, config
    )
    assert [v for v, _ in c.options] == ["Blue", "Black", "Green"]
    assert [v for v, _ in c.values] == ["Blue", "Black", "Green", "Red"]  # a zero count is no value
    assert c.gain_bits == pytest.approx(expected_gain([50, 30, 10], 95))


def test_no_question_without_an_attribute_worth_asking() -> None:
    config = FollowUpConfig(enabled=True, min_values=3, min_gain_bits=0.5)
    two = candidate(_attr("gender"), [("Men", 50), ("Women", 50)], 100, config)
    assert choose([two], config) == (None, "no_attribute")  # 2 values, 3 wanted
    assert choose([], config) == (None, "no_attribute")
    lopsided = candidate(_attr("season"), [("Summer", 97), ("Fall", 2), ("Winter", 1)], 100, config)
    assert lopsided.gain_bits < 0.5
    assert choose([lopsided], config) == (None, "low_gain")


def test_settings_and_wording() -> None:
    with pytest.raises(ValidationError):
        FollowUpConfig(min_values=7, max_options=6)
    with pytest.raises(ValidationError):
        FollowUpConfig(max_options=9)
    with pytest.raises(ValidationError):
        Attribute(name="year", type="integer", filterable=True, facetable=True, ask=True)  # type: ignore[arg-type]
    assert _attr("color").askable and not _attr("color", ask=False).askable
    assert not Attribute(name="color", facetable=True).askable  # not filterable: cannot be answered
    assert question_of(_attr("article_type")) == "Which article type?"
    assert question_of(_attr("color", question="Which colour?")) == "Which colour?"


# -- the stage in the pipeline, on fashion ---------------------------------------------------------


@pytest.fixture(scope="module")
def fashion(demo_env):  # type: ignore[no-untyped-def]
    tenants = Tenants(demo_env.store, ttl=60)
    index = IndexRegistry(tenants, demo_env.data_dir).get("fashion")
    base = tenants.config("fashion")

    def search(
        text: str, *, budget_s: float = 5, filters: tuple[FilterSpec, ...] = (), **follow_up: Any
    ) -> SearchResult:
        return SearchPipeline(budget_s=budget_s).search(
            index, _with(base, **follow_up), SearchQuery(text, size=10, filters=filters, facets=["color"])
        )

    return search


def _with(config: TenantConfig, **follow_up: Any) -> TenantConfig:
    settings = config.global_.follow_up.model_copy(update=follow_up)
    return dataclasses.replace(config, global_=config.global_.model_copy(update={"follow_up": settings}))


def test_a_broad_query_asks_about_colour_with_the_facet_counts(fashion) -> None:  # type: ignore[no-untyped-def]
    result = fashion("men tshirts")
    follow_up, graph = result.follow_up, result.query_graph.follow_up
    assert follow_up is not None and graph is not None
    assert follow_up.attribute == "color" and follow_up.question == "Which colour?" and follow_up.number == 1
    facet = [(f.value, f.count) for f in result.facets["color"]]
    assert [(o.value, o.count) for o in follow_up.options] == facet[:6]
    assert graph.asked and graph.reason == "asked" and graph.attribute == "color" and graph.answered == 0
    gains = [c.gain_bits for c in graph.candidates]
    assert gains == sorted(gains, reverse=True) and graph.candidates[0].attribute == "color"
    # gender and article type were named in the query: never asked about
    assert {"gender", "article_type"}.isdisjoint(c.attribute for c in graph.candidates)


def test_answering_narrows_and_the_next_question_is_about_something_else(fashion) -> None:  # type: ignore[no-untyped-def]
    first = fashion("men tshirts")
    assert first.follow_up is not None
    option = first.follow_up.options[1]
    answer = (FilterSpec(field="color", value=option.value),)
    second = fashion("men tshirts", filters=answer)
    assert second.total == option.count < first.total
    assert second.products and all(p["color"] == option.value for p in second.products)
    assert second.follow_up is not None and second.follow_up.number == 2
    assert second.follow_up.attribute != "color"
    assert "color" not in {c.attribute for c in second.query_graph.follow_up.candidates}  # type: ignore[union-attr]


def test_no_more_questions_than_max_questions(fashion) -> None:  # type: ignore[no-untyped-def]
    two = (FilterSpec(field="color", value="Blue"), FilterSpec(field="season", value="Summer"))
    result = fashion("men tshirts", filters=two)
    assert result.total >= 40 and result.follow_up is None
    assert result.query_graph.follow_up is not None
    assert (
        result.query_graph.follow_up.reason == "max_questions" and result.query_graph.follow_up.answered == 2
    )
    one = fashion("men tshirts", filters=two[:1], max_questions=1)
    assert one.follow_up is None and one.query_graph.follow_up.reason == "max_questions"  # type: ignore[union-attr]
    # a filter on an attribute that is not askable is no answer
    priced = fashion("men tshirts", filters=(FilterSpec(field="price", value={"gte": 0}),), max_questions=1)
    assert priced.follow_up is not None and priced.follow_up.number == 1


def test_a_narrow_query_gets_no_question(fashion) -> None:  # type: ignore[no-untyped-def]
    narrow = fashion("men tshirts", min_results=100_000)
    assert narrow.total > 0 and narrow.follow_up is None
    assert narrow.query_graph.follow_up.reason == "few_results"  # type: ignore[union-attr]
    lopsided = fashion("men tshirts", min_gain_bits=9.0)
    assert lopsided.follow_up is None and lopsided.query_graph.follow_up.reason == "low_gain"  # type: ignore[union-attr]


def test_a_tenant_without_guided_search_asks_nothing(fashion) -> None:  # type: ignore[no-untyped-def]
    off = fashion("men tshirts", enabled=False)
    assert off.follow_up is None and off.query_graph.follow_up is None
    assert "followUp" not in off.model_dump(by_alias=True)


def test_past_the_deadline_nothing_is_counted_or_asked(fashion) -> None:  # type: ignore[no-untyped-def]
    late = fashion("men tshirts", budget_s=-1.0)
    assert late.total > 0 and late.follow_up is None
    assert late.query_graph.follow_up.reason == "deadline"  # type: ignore[union-attr]


def test_the_chooser_setting_changes_the_question(fashion) -> None:  # type: ignore[no-untyped-def]
    first = fashion("men tshirts", chooser="first_facet")
    assert first.follow_up is not None and first.follow_up.attribute == "brand"  # first askable in fashion


def test_guided_search_wording_builds_no_new_index(tmp_path: Any) -> None:
    from aisle.core.tenant_config import AttributeConfiguration
    from aisle.search.index.writer import index_dir

    plain = AttributeConfiguration(
        attributes=[Attribute(name="title", type="text", role="title"), _attr("color")]
    )  # type: ignore[arg-type]
    worded = AttributeConfiguration(
        attributes=[
            Attribute(name="title", type="text", role="title"),
            _attr("color", question="Which colour?", ask=True),
        ]  # type: ignore[arg-type]
    )
    assert index_dir(tmp_path, "t", "v1", plain) == index_dir(tmp_path, "t", "v1", worded)
    searchable = AttributeConfiguration(
        attributes=[Attribute(name="title", type="text", role="title"), _attr("color", searchable=True)]  # type: ignore[arg-type]
    )
    assert index_dir(tmp_path, "t", "v1", plain) != index_dir(tmp_path, "t", "v1", searchable)


def test_no_question_when_the_query_names_a_product(fashion) -> None:  # type: ignore[no-untyped-def]
    # issue 43: the whole name finds the product first (its words together match 1 product, the
    # relaxed stage ~200 more) and used to ask "For which season?"
    named = fashion("nike men black roshe run sports shoes")
    assert named.products[0]["title"] == "Nike Men Black Roshe Run Sports Shoes"
    assert named.total >= 40 and named.follow_up is None
    graph = named.query_graph.follow_up
    assert graph is not None and not graph.asked and graph.reason == "strict_few"
    before = fashion("nike men black roshe run sports shoes", skip_named_products=False)
    assert before.follow_up is not None  # what the check changes
    assert fashion("men tshirts").follow_up is not None  # a broad query still asks
    # a model number: the title's "n231" is "n" and "231" as in the query (the title was analysed whole,
    # so two of seven words seemed missing from it and the query read as no product's name)
    coded = fashion("lakme true wear freespirit nail polish n231")
    assert coded.products[0]["title"] == "Lakme True Wear Freespirit Nail Polish N231"
    assert coded.follow_up is None and coded.query_graph.follow_up.reason == "strict_few"
    # generic titles shared by the first results: the query names no one product, the question helps
    shared = fashion("puma men black sports shoes")
    assert [p["title"] for p in shared.products[:2]] == ["Puma Men Black Sports Shoes"] * 2
    assert shared.follow_up is not None


def test_a_title_all_in_the_query_names_the_product(demo_env) -> None:  # type: ignore[no-untyped-def]
    tenants = Tenants(demo_env.store, ttl=3600)
    index = IndexRegistry(tenants, demo_env.data_dir).get("fashion")
    ctx = SearchPipeline(budget_s=5).run(
        index, tenants.config("fashion"), SearchQuery("nike men black roshe run sports shoes", size=10)
    )
    assert ctx.graph is not None
    for tried in ctx.graph.stages_tried:  # as if every word together matched many products
        if tried["stage"] == "strict":
            tried["hits"] = 500
    assert names_product(ctx, 40) == "title_match"  # the second title holds words the query lacks
    ctx.output.hits = [ctx.output.hits[0], ctx.output.hits[0]]
    assert names_product(ctx, 40) is None  # the same title twice: it names no one product
