"""Search as you type (issue 44): with ``prefix`` the last, unfinished word also matches the words that
begin with it, as Typesense's ``prefix`` and Algolia's ``prefixLast``; a space after it, or ``prefix``
off, searches the words as typed."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from aisle.core.config import Settings
from aisle.search.pipeline import SearchPipeline
from aisle.search.query import SearchQuery
from aisle.services.search.app import create_app


def _titles(result: Any) -> list[str]:
    return [str(p["title"]).lower() for p in result.products]


def test_the_unfinished_last_word_matches_the_words_beginning_with_it(homedepot: Any) -> None:
    tenants, index = homedepot
    config, pipeline = tenants.config("homedepot"), SearchPipeline(budget_s=5.0)
    typed = pipeline.search(index, config, SearchQuery("cordless dr", size=10, prefix=True))
    assert typed.query_graph.stage == "strict" and typed.total > 10
    assert all("cordless" in t and re.search(r"\bdr", t) for t in _titles(typed)), _titles(typed)
    plain = pipeline.search(index, config, SearchQuery("cordless dr", size=10))
    assert plain.query_graph.stage != "strict"  # "dr" as a word of its own: no product has both
    # a space after the last word: it is finished, searched as typed
    spaced = pipeline.search(index, config, SearchQuery("cordless dr ", size=10, prefix=True))
    assert [p["id"] for p in spaced.products] == [p["id"] for p in plain.products]


def test_a_finished_word_keeps_its_own_matches(homedepot: Any) -> None:
    tenants, index = homedepot
    config, pipeline = tenants.config("homedepot"), SearchPipeline(budget_s=5.0)
    whole = pipeline.search(index, config, SearchQuery("cordless drill", size=10))
    typed = pipeline.search(index, config, SearchQuery("cordless drill", size=10, prefix=True))
    assert typed.total >= whole.total  # "drill" and the words beginning with it ("drills", "drilling")
    assert set(p["id"] for p in whole.products) & set(p["id"] for p in typed.products)


def _typed_on_fashion(demo_env: Any, query: str, size: int) -> list[str]:
    """The first ``size`` titles of the demo fashion tenant for ``query`` typed with ``prefix`` on."""
    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.search.indexes import IndexRegistry

    tenants = Tenants(open_blob_store(demo_env.storage_url), ttl=0)
    index = IndexRegistry(tenants, demo_env.data_dir).get("fashion")
    result = SearchPipeline(budget_s=5.0).search(
        index, tenants.config("fashion"), SearchQuery(query, size=size, prefix=True)
    )
    return _titles(result)


@pytest.mark.parametrize(("query", "word"), [("red shi", "shirt"), ("nike men bla", "black")])
def test_fashion_completions_rank_products_with_the_completed_word(
    demo_env: Any, query: str, word: str
) -> None:
    titles = _typed_on_fashion(demo_env, query, 10)
    assert sum(word in t for t in titles) >= 6, titles


@pytest.mark.parametrize(
    ("query", "pattern"),
    [
        # a one-letter last word: its completions counted among the other words' matches, not the
        # catalog's most frequent k-words (kurta, kids), which no Arrow Woman product holds
        ("arrow woman k", r"\bwoman k"),
        # a completion that is another word of the query adds nothing: "ad" reads as "adi", not "adidas"
        ("adidas men's ad", r"\bad(?!idas)"),
    ],
)
def test_completions_come_from_the_products_the_other_words_match(
    demo_env: Any, query: str, pattern: str
) -> None:
    titles = _typed_on_fashion(demo_env, query, 5)
    assert titles
    assert all(re.search(pattern, t) for t in titles), titles


def test_the_http_doors_take_prefix(demo_env: Any) -> None:
    settings = Settings(storage_url=demo_env.storage_url, data_dir=demo_env.data_dir, auth="off")
    with TestClient(create_app(settings)) as client:
        body = {"query": "cordless dr", "tenant": "homedepot", "size": 5, "analytics": False}
        posted = client.post("/search", json={**body, "prefix": True}).json()
        got = client.get(
            "/search", params={"tenant": "homedepot", "q": "cordless dr", "size": 5, "prefix": "true"}
        )
        off = client.post("/search", json=body).json()
        bad = client.post("/search", json={**body, "prefix": "maybe"})
    assert got.status_code == 200
    assert [p["id"] for p in got.json()["products"]] == [p["id"] for p in posted["products"]]
    assert posted["queryGraph"]["stage"] == "strict" and off["queryGraph"]["stage"] != "strict"
    assert bad.status_code == 422
