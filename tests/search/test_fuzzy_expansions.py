"""Typo expansions found once per index (issue 32): the same products as tantivy's fuzzy query, one
expansion per search shared by retrieval and facet counting, a bounded cache, and a new one when the
index is reopened for a new catalog or configuration."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
import tantivy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aisle.catalog.datasets.common import tenant_files
from aisle.catalog.importer import import_catalog
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import Attribute, AttributeConfiguration, GlobalConfiguration
from aisle.search.index.fuzzy import FuzzyTerms
from aisle.search.index.reader import TenantIndex
from aisle.search.indexes import IndexRegistry
from aisle.search.pipeline import SearchPipeline
from aisle.search.query import SearchQuery
from aisle.search.query.terms import fuzzy_query, tantivy_fuzzy_query

GROCERY = """id,title,brand,dept
1,Organic Whole Milk 1 gal,Horizon,Dairy
2,Organic Reduced Fat Milk,Horizon,Dairy
3,Whole Milk Greek Yogurt,Fage,Dairy
4,Nonfat Greek Yogurt Plain,Fage,Dairy
5,Honey Nut Cheerios Cereal,General Mills,Pantry
6,Cheerios Original Cereal,General Mills,Pantry
7,Natural Creamy Peanut Butter,Jif,Pantry
8,Extra Crunchy Peanut Butter,Jif,Pantry
9,Nutella Hazelnut Spread,Nutella,Pantry
10,Honeycrisp Apples 3 lb bag,Fresh Farms,Produce
"""
WORDS = ["milk", "organic", "yogurt", "cheerios", "peanut", "butter", "hazelnut", "honeycrisp", "greek"]


def _attributes(brand_searchable: bool = True) -> AttributeConfiguration:
    return AttributeConfiguration(
        attributes=[
            Attribute(name="title", type="text", role="title", searchable=True, weight=2.0),
            Attribute(
                name="brand", role="brand", searchable=brand_searchable, filterable=True, facetable=True
            ),
            Attribute(name="dept", searchable=True, filterable=True, facetable=True),
        ]
    )


@dataclass
class Shop:
    tenants: Tenants
    indexes: IndexRegistry
    tmp: Path

    def index(self) -> TenantIndex:
        return self.indexes.get("default")

    def load(self, csv: str) -> None:
        source = self.tmp / "catalog.csv"
        source.write_text(csv)
        import_catalog(self.tenants, "default", source)


@pytest.fixture
def shop(blob_store: BlobStore, tmp_path: Path) -> Shop:
    tenants = Tenants(blob_store, ttl=0)
    tenants.write_config("default", tenant_files(_attributes(), GlobalConfiguration()))
    shop = Shop(tenants, IndexRegistry(tenants, tmp_path / "data", check_every=0), tmp_path)
    shop.load(GROCERY)
    return shop


def _ids(index: TenantIndex, query: tantivy.Query) -> set[int]:
    return set(index.ords(index.searcher.search(query, 100).hits))


def _edit(word: str, ops: list[tuple[int, int, str]]) -> str:
    """``word`` after a few edits (0 delete, 1 insert, 2 substitute, 3 swap with the next character)."""
    for op, at, ch in ops:
        i = at % (len(word) + 1)
        if op == 0 and i < len(word):
            word = word[:i] + word[i + 1 :]
        elif op == 1:
            word = word[:i] + ch + word[i:]
        elif op == 2 and i < len(word):
            word = word[:i] + ch + word[i + 1 :]
        elif op == 3 and i + 1 < len(word):
            word = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    return word or "x"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.sampled_from(WORDS),
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 12), st.sampled_from("aeiourstlnx")), max_size=3),
    st.integers(1, 2),
)
def test_expansions_match_the_products_tantivys_fuzzy_query_matches(
    shop: Shop, word: str, ops: list[tuple[int, int, str]], distance: int
) -> None:
    index = shop.index()
    typo = _edit(word, ops)
    assert _ids(index, fuzzy_query(index, typo, distance)) == _ids(
        index, tantivy_fuzzy_query(index, typo, distance)
    )


def test_a_transposition_costs_one_edit(shop: Shop) -> None:
    fuzzy = shop.index().fuzzy_terms()
    assert fuzzy.expand("s_title", "mlik", 1) == ("milk",)
    assert fuzzy.expand("s_title", "mlik", 1) is fuzzy.expand("s_title", "mlik", 1)  # kept
    assert fuzzy.expand("s_title", "zzzzzz", 2) == ()


def test_a_search_expands_each_typo_once_for_retrieval_and_facets(shop: Shop) -> None:
    index = shop.index()
    config = shop.tenants.config("default")
    pipeline = SearchPipeline(budget_s=60)
    text = "chereoz hazlenut yoghrt"  # no two words in one product: the typo stage answers
    plain = pipeline.run(index, config, SearchQuery(text, size=20))
    assert plain.graph is not None and plain.graph.stage == "typo"
    expanded = index.fuzzy_terms().misses
    assert expanded > 0
    index.derived.pop("fuzzy_terms")  # as a new index: nothing expanded yet
    faceted = pipeline.run(index, config, SearchQuery(text, size=20, facets=("brand", "dept")))
    assert sum(c for _, c in faceted.output.facet_counts["dept"]) == faceted.output.total > 0
    assert index.fuzzy_terms().misses == expanded  # facet counting expanded nothing again
    again = pipeline.run(index, config, SearchQuery(text, size=20, facets=("brand", "dept")))
    assert index.fuzzy_terms().misses == expanded  # nor did the next search of the same words
    assert again.output.hits == faceted.output.hits == plain.output.hits


def test_the_cache_is_bounded_least_recently_used_first(shop: Shop) -> None:
    fuzzy = FuzzyTerms(shop.index().searcher, size=2)
    fuzzy.expand("s_title", "mlik", 1)
    fuzzy.expand("s_title", "yogrt", 1)
    fuzzy.expand("s_title", "mlik", 1)  # used again: "yogrt" is now the oldest
    fuzzy.expand("s_title", "buttr", 1)
    assert len(fuzzy) == 2 and fuzzy.misses == 3
    assert fuzzy.expand("s_title", "mlik", 1) == ("milk",) and fuzzy.misses == 3
    assert fuzzy.expand("s_title", "yogrt", 1) == ("yogurt",) and fuzzy.misses == 4


def test_a_new_catalog_gets_new_expansions(shop: Shop) -> None:
    before = shop.index()
    assert before.fuzzy_terms().expand("s_title", "chex", 1) == ()
    assert before.fuzzy_terms().expand("s_title", "cherio", 1) == ("cheerio",)  # stemmed
    shop.load(GROCERY.replace("Cheerios", "Chex"))
    after = shop.index()
    assert after is not before
    assert after.fuzzy_terms().expand("s_title", "chex", 1) == ("chex",)
    assert after.fuzzy_terms().expand("s_title", "cherio", 1) == ()
    assert _ids(after, fuzzy_query(after, "chexx", 1)) == {4, 5}  # the renamed products
    assert _ids(before, fuzzy_query(before, "chexx", 1)) == set()  # the old index keeps its own


def test_a_configuration_change_gets_new_expansions(shop: Shop) -> None:
    before = shop.index()
    assert _ids(before, fuzzy_query(before, "fagge", 1)) == {2, 3}  # the brand "Fage"
    shop.tenants.write_config(
        "default", {"attribute_configuration.json": _attributes(brand_searchable=False)}
    )
    after = shop.index()
    assert after is not before
    assert _ids(after, fuzzy_query(after, "fagge", 1)) == set()  # brand no longer searched
    assert _ids(after, fuzzy_query(after, "fagge", 1)) == _ids(after, tantivy_fuzzy_query(after, "fagge", 1))
