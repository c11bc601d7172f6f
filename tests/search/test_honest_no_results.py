"""Honest no-results (issue 43): a term that cannot identify a product (one character, a digit group, a
stop word, a unit, a short letter group split from digits) never carries a match alone, and the vector
leg adds a product only above the tenant's similarity floor, so nonsense finds nothing while a query
whose words miss but whose meaning hits still finds its products.

The nonsense queries here are the tests' set; ``bench/bench_no_results.py`` keeps a set of its own that
no test sees."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.vectors import MiniTenant, mini_fashion

from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.search.indexes import IndexRegistry
from aisle.search.pipeline import SearchPipeline, default_stages
from aisle.search.query import SearchQuery
from aisle.search.stages.retrieve import weak
from aisle.search.stages.understand import fragments
from aisle.vectors.search import VectorSearch
from aisle.vectors.similarity_floor import FLOOR_FILE, null_queries
from aisle.vectors.store import VectorStore
from aisle.vectors.table import latest_table

NONSENSE = [
    "qzxv 8f3a2kj",  # the three: 19,560, 5,902 and 542 Home Depot products before
    "qzxv8kj",
    "8f3a2",
    "qwrtzp",
    "asdfgh",
    "zxcvbnm",
    "lkjhgfd",
    "pqwkz jvbn",
    "wqxz 77b",
    "zzqxj",
    "ytrewq vbnx",
    "xkcdqz 4j",
    "3x5k4w",  # "4w" reads "4 watt": a unit, never spelt into "want"
]
STOP = {"a", "the", "for", "with"}


def test_terms_that_cannot_identify_a_product_are_weak() -> None:
    for group in (["8"], ["f"], ["1/2"], ["2.5"], ["the"], ["in"], ["watt"], ["1/2 in"]):
        assert weak(group, STOP), group
    for group in (["drill"], ["kj"], ["men", "mens"], ["rain barrel"], ["8", "eight"]):
        assert not weak(group, STOP), group
    assert weak(["kj"], STOP, {"kj"})  # split from digits in one typed word


def test_fragments_are_short_letter_groups_split_from_digits_in_one_word() -> None:
    def analyze(text: str) -> list[str]:
        return text.split()

    assert fragments("qzxv 8f3a2kj", analyze) == {"f", "a", "kj"}
    assert fragments("dw988 cordless drill", analyze) == {"dw"}
    assert fragments("2x4 lumber", analyze) == {"x"}
    assert fragments("60w bulb", analyze) == set()  # "watt": a unit, weak on its own terms
    assert fragments("r30 insulation kit", analyze) == {"r"}
    assert fragments("cordless drill", analyze) == set()


@pytest.mark.parametrize("tenant", ["fashion", "homedepot"])
def test_nonsense_finds_nothing_on_the_demo_tenants(demo_env: Any, tenant: str) -> None:
    tenants = Tenants(open_blob_store(demo_env.storage_url), ttl=0)
    index = IndexRegistry(tenants, demo_env.data_dir).get(tenant)
    config, pipeline = tenants.config(tenant), SearchPipeline(budget_s=5.0)
    found = {q: pipeline.search(index, config, SearchQuery(q, size=5)) for q in NONSENSE}
    assert {q: r.total for q, r in found.items() if r.total} == {}
    assert all(r.query_graph.stage == "none" for r in found.values())


def test_weak_terms_still_answer_in_the_strict_stage_and_score_beside_others(homedepot: Any) -> None:
    tenants, index = homedepot
    config, pipeline = tenants.config("homedepot"), SearchPipeline(budget_s=5.0)
    lumber = pipeline.search(index, config, SearchQuery("2x4", size=5))
    assert lumber.total > 0 and lumber.query_graph.stage == "strict"  # every weak term together
    assert [t["stage"] for t in lumber.query_graph.stages_tried] == ["strict"]  # and no stage after
    # a strong term carries the relaxed stage; the weak ones still rank: all of "1/2 in" first
    pipe = pipeline.search(index, config, SearchQuery("1/2 in qzxvq pvc", size=10))
    assert pipe.total > 0 and pipe.query_graph.stage in ("relaxed", "typo")
    titles = [p["title"].lower() for p in pipe.products]
    assert all("pvc" in t for t in titles)
    assert sum("1/2" in t for t in titles) >= 5


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> MiniTenant:
    return mini_fashion(tmp_path_factory.getbasetemp() / "vectors-mini", shared_data)


@pytest.fixture(scope="module")
def hybrid(mini: MiniTenant) -> tuple[Any, Any, SearchPipeline]:
    tenants = Tenants(open_blob_store(mini.storage_url), ttl=0)
    index = IndexRegistry(tenants, mini.data_dir).get("fashion")
    pipeline = SearchPipeline(default_stages(vectors=VectorSearch(VectorStore(mini.data_dir))), budget_s=30.0)
    return index, tenants.config("fashion"), pipeline


def test_the_build_writes_a_floor_per_encoder_above_every_calibration_string(mini: MiniTenant) -> None:
    table = latest_table(mini.data_dir, "fashion", "text")
    assert table is not None
    floors = json.loads((table / FLOOR_FILE).read_text())["floors"]
    assert set(floors) == {"static", "minilm"} and all(0.0 < f < 1.0 for f in floors.values())
    assert len(set(null_queries())) > 350  # varied strings, the same on every build
    assert null_queries() == null_queries()


def test_nonsense_finds_nothing_when_the_nearest_products_are_asked_too(hybrid: Any) -> None:
    index, config, pipeline = hybrid
    for q in NONSENSE:
        result = pipeline.search(index, config, SearchQuery(q, size=5))
        graph = result.query_graph
        assert result.total == 0 and result.products == [], q
        assert graph.hybrid == "used" and graph.hybrid_floor is not None, q
        assert graph.hybrid_floor.source == "calibrated" and graph.hybrid_floor.below > 0, q


@pytest.mark.parametrize(
    ("query", "article_type"),
    [
        ("wristwatch", "Watches"),  # a word the catalog lacks ("watch" is there, not "wristwatch")
        ("timepiece for my wrist", "Watches"),  # a description of use
    ],
)
def test_words_that_miss_but_meaning_that_hits_still_find_products(
    hybrid: Any, query: str, article_type: str
) -> None:
    index, config, pipeline = hybrid
    lexical = SearchPipeline(budget_s=5.0).search(index, config, SearchQuery(query, size=5))
    assert lexical.total == 0  # no word of it matches
    result = pipeline.search(index, config, SearchQuery(query, size=5))
    types = [index.rows[index.ord_by_id[p["id"]]]["article_type"] for p in result.products]
    assert result.total > 0 and types and all(t == article_type for t in types), (query, types)
    floor = result.query_graph.hybrid_floor
    assert floor is not None and floor.encoder == "minilm"


def test_a_configured_floor_replaces_the_calibrated_one(hybrid: Any) -> None:
    import dataclasses

    index, config, pipeline = hybrid
    hybrid_config = config.global_.hybrid.model_copy(update={"min_similarity": -1.0})
    anything = dataclasses.replace(
        config, global_=config.global_.model_copy(update={"hybrid": hybrid_config})
    )
    result = pipeline.search(index, anything, SearchQuery("qwrtzp", size=5))
    floor = result.query_graph.hybrid_floor
    assert floor is not None and (floor.source, floor.floor, floor.below) == ("configured", -1.0, 0)
    assert result.total > 0  # every nearest product passes a floor of -1: the old behaviour
