"""A labelled set of fashion and Home Depot queries and the queryGraph each must produce.

Written by hand from the catalogs (issue "Query understanding"): brand, colour, gender, category or
article type, price constraints, spelling corrections, compounds, synonyms and unit normalisation.
Each expectation lists what must be found; ``None`` for a field means it must not be extracted.
"""

from __future__ import annotations

from typing import Any

import pytest

from aisle.core.tenancy import Tenants
from aisle.search.indexes import IndexRegistry
from aisle.search.pipeline import SearchPipeline
from aisle.search.query import SearchQuery

F, H = "fashion", "homedepot"
SHOES = "Footwear > Shoes"
TSHIRTS = "Apparel > Topwear > Tshirts"

# (tenant, query, expected): expected keys are attribute names (values that must all be present,
# or None: not extracted), "price" (exact constraint), "corrections" (original -> corrected),
# "normalized" (exact normalised query), "synonyms" (text -> one expected expansion).
LABELS: list[tuple[str, str, dict[str, Any]]] = [
    (
        F,
        "red nike shoes under 2000",
        {"color": ["Red"], "brand": ["Nike"], "category": [SHOES], "price": {"lte": 2000}},
    ),
    (F, "red nike running shoes", {"color": ["Red"], "brand": ["Nike"], "category": [SHOES], "price": None}),
    (F, "blue jeans for women", {"color": ["Blue"], "article_type": ["Jeans"], "gender": ["Women"]}),
    (F, "puma tshirts for men", {"brand": ["Puma"], "article_type": ["Tshirts"], "gender": ["Men"]}),
    (F, "adidas black tshirt", {"brand": ["ADIDAS", "Adidas"], "color": ["Black"], "category": [TSHIRTS]}),
    (F, "watches between 1000 and 3000", {"article_type": ["Watches"], "price": {"gte": 1000, "lte": 3000}}),
    (F, "kurta for women", {"article_type": ["Kurtas"], "gender": ["Women"], "color": None}),
    (
        F,
        "white sports shoes below 3000",
        {"color": ["White"], "article_type": ["Sports Shoes"], "price": {"lte": 3000}},
    ),
    (F, "nkie shoes", {"brand": ["Nike"], "corrections": {"nkie": "nike"}}),
    (
        F,
        "addidas tshirt",
        {"brand": ["Adidas"], "article_type": ["Tshirts"], "corrections": {"addidas": "adidas"}},
    ),
    (F, "reebok sandals", {"brand": ["Reebok"], "article_type": ["Sandals"]}),
    (F, "black handbags", {"color": ["Black"], "article_type": ["Handbags"]}),
    (F, "men formal shirts", {"gender": ["Men"], "article_type": ["Shirts"]}),
    (F, "women heels", {"gender": ["Women"], "article_type": ["Heels"]}),
    (F, "green kurtis", {"color": ["Green"], "article_type": ["Kurtis"]}),
    (F, "sunglasses for men", {"article_type": ["Sunglasses"], "gender": ["Men"]}),
    (F, "fastrack watches", {"brand": ["Fastrack"], "article_type": ["Watches"]}),
    (F, "levis jeans men", {"brand": ["Levis"], "article_type": ["Jeans"], "gender": ["Men"]}),
    (F, "pink tops", {"color": ["Pink"], "article_type": ["Tops"]}),
    (F, "girls dresses", {"gender": ["Girls"], "article_type": ["Dresses"]}),
    (F, "boys tshirts", {"gender": ["Boys"], "article_type": ["Tshirts"]}),
    (F, "peter england shirts", {"brand": ["Peter England"], "article_type": ["Shirts"]}),
    (F, "casual shoes over 2000", {"article_type": ["Casual Shoes"], "price": {"gte": 2000}}),
    (F, "backpacks 500-1500", {"article_type": ["Backpacks"], "price": {"gte": 500, "lte": 1500}}),
    (F, "grey track pants", {"color": ["Grey"], "article_type": ["Track Pants"]}),
    (F, "titan watch for women", {"brand": ["Titan"], "article_type": ["Watches"], "gender": ["Women"]}),
    (F, "unisex caps", {"gender": ["Unisex"], "article_type": ["Caps"]}),
    (F, "navy blue shirt", {"color": ["Navy Blue"], "article_type": ["Shirts"]}),
    (F, "wallets under 1000", {"article_type": ["Wallets"], "price": {"lte": 1000}}),
    (F, "belts for men", {"article_type": ["Belts"], "gender": ["Men"]}),
    (F, "red tape shoes", {"brand": ["Red Tape"], "color": None, "category": [SHOES]}),
    (F, "flip flops", {"article_type": ["Flip Flops"]}),
    (F, "lotto sports shoes", {"brand": ["Lotto"], "article_type": ["Sports Shoes"]}),
    (F, "t-shirt", {"article_type": ["Tshirts"], "normalized": "t shirt", "synonyms": {"t shirt": "tshirt"}}),
    (F, "sneakers", {"article_type": ["Sports Shoes"], "synonyms": {"sneakers": "sports shoes"}}),
    (F, "trainers", {"article_type": ["Sports Shoes"]}),
    (F, "silver earrings", {"color": ["Silver"], "article_type": ["Earrings"]}),
    (F, "jackets for men", {"article_type": ["Jackets"], "gender": ["Men"]}),
    (F, "sports sandals", {"article_type": ["Sports Sandals"]}),
    (F, "kids shoes", {"gender": ["Boys", "Girls"], "category": [SHOES]}),
    (F, "nike cap", {"brand": ["Nike"], "article_type": ["Caps"]}),
    (F, "shoes below $50", {"category": [SHOES], "price": {"lte": 50}}),
    (F, "Café Crème kurta", {"normalized": "cafe creme kurta", "article_type": ["Kurtas"]}),
    (H, '1/2" pvc pipe', {"normalized": "1/2 in pvc pipe"}),
    (H, "1/2 inch pvc pipe", {"normalized": "1/2 in pvc pipe"}),
    (H, "3/4 in. plywood", {"normalized": "3/4 in plywood"}),
    (H, "8 ft. 2x4", {"normalized": "8 ft 2 x 4"}),
    (H, "5 gallon bucket", {"normalized": "5 gal bucket"}),
    (H, "60W light bulb", {"normalized": "60 watt light bulb"}),
    (H, "50 lbs sand", {"normalized": "50 lb sand"}),
    (H, "18V drill", {"normalized": "18 volt drill"}),
    (H, "rainbarrel", {"corrections": {"rainbarrel": "rain barrel"}}),
    (H, "wall paper", {"corrections": {"wall paper": "wallpaper"}}),
    (H, "counter tops", {"corrections": {"counter tops": "countertops"}}),
    (H, "doorknobs", {"corrections": {"doorknobs": "door knobs"}}),
    (H, "toliet seat", {"corrections": {"toliet": "toilet"}}),
    (H, "moen kitchen fauchet", {"corrections": {"fauchet": "faucet"}}),
    (H, "ourdoor patio tile", {"corrections": {"ourdoor": "outdoor"}}),
    (H, "handheld seed speader", {"corrections": {"speader": "spreader"}}),
    (H, "elctric heating lamps", {"corrections": {"elctric": "electric"}}),
    (H, "psint gun", {"corrections": {"psint": "paint"}}),
    (H, "refrigirator", {"corrections": {"refrigirator": "refrigerator"}}),
    (H, "dewalt drill", {"corrections": {}}),
    (H, "ceiling fan", {"corrections": {}}),
    (H, "angle bracket", {"corrections": {}, "normalized": "angle bracket"}),
    (H, "under cabinet lighting", {"price": None}),  # no price in this catalog: "under" stays a word
]


@pytest.fixture(scope="module")
def understand(demo_env):  # type: ignore[no-untyped-def]
    tenants = Tenants(demo_env.store, ttl=60)
    registry = IndexRegistry(tenants, demo_env.data_dir)
    pipeline = SearchPipeline(budget_s=5)
    return lambda tenant, q: (
        pipeline.search(registry.get(tenant), tenants.config(tenant), SearchQuery(q, size=1)).query_graph
    )


def test_the_set_is_large_enough() -> None:
    assert len(LABELS) >= 60
    assert {t for t, _, _ in LABELS} == {F, H}


@pytest.mark.parametrize(("tenant", "query", "expected"), LABELS, ids=[q for _, q, _ in LABELS])
def test_query_graph(understand, tenant: str, query: str, expected: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    graph = understand(tenant, query)
    found = {a.field: set(a.values) for a in graph.attributes}
    for key, value in expected.items():
        if key == "price":
            assert graph.price == ({k: float(v) for k, v in value.items()} if value else None)
        elif key == "corrections":
            assert {c.original: c.corrected for c in graph.corrections} == value
        elif key == "normalized":
            assert graph.normalized == value
        elif key == "synonyms":
            got = {s.text: s.expansions for s in graph.synonyms}
            for text, expansion in value.items():
                assert expansion in got.get(text, [])
        elif value is None:
            assert key not in found, f"{key} should not be extracted: {found}"
        else:
            assert set(value) <= found.get(key, set()), f"{key}: {found.get(key)}"
