"""FREQUENTLY_BOUGHT_TOGETHER and BUNDLE_RECOMMENDATIONS on a real Complete Journey slice."""

from __future__ import annotations

import polars as pl
import pytest

from aisle.core.storage import BlobStore
from aisle.core.tenancy import tenant_scope
from aisle.recs.evaluation import basket_completion
from aisle.recs.loading import load_recommender
from aisle.recs.models.base import RecContext
from aisle.recs.models.bought_together import BoughtTogetherModel
from aisle.recs.models.bundles import BundleModel, BundlePlan
from aisle.recs.training import save_model, train_bundle_model, train_fbt

pytestmark = pytest.mark.slow  # trains on the Complete Journey baskets


@pytest.fixture(scope="module")
def lines() -> pl.DataFrame:
    from aisle.recs.events import completejourney_lines

    return completejourney_lines(max_week=13)


@pytest.fixture(scope="module")
def categories() -> pl.DataFrame:
    from aisle.recs.events import completejourney_categories

    return completejourney_categories()


@pytest.fixture(scope="module")
def fbt(lines: pl.DataFrame, categories: pl.DataFrame) -> BoughtTogetherModel:
    return train_fbt(lines.filter(pl.col("week") < 11), categories)


@pytest.fixture(scope="module")
def bundles(lines: pl.DataFrame, categories: pl.DataFrame) -> BundleModel:
    return train_bundle_model(lines.filter(pl.col("week") < 11), categories)


def _pairs(lines: pl.DataFrame) -> pl.DataFrame:
    b = lines.select("basket_id", "item_id").unique()
    return (
        b.join(b, on="basket_id")
        .filter(pl.col("item_id") != pl.col("item_id_right"))
        .group_by("item_id", "item_id_right")
        .len()
    )


def test_a_pair_bought_together_ranks_above_an_unrelated_popular_item(
    lines: pl.DataFrame, fbt: BoughtTogetherModel
) -> None:
    train = lines.filter(pl.col("week") < 11)
    pairs = _pairs(train)
    popularity = train.group_by("item_id").agg(n=pl.col("basket_id").n_unique()).sort("n", descending=True)
    # a mid-popularity seed whose strongest partner is not a top-20 best seller
    best_sellers = popularity["item_id"].head(20).to_list()
    cand = (
        pairs.filter(~pl.col("item_id_right").is_in(best_sellers) & (pl.col("len") >= 5))
        .join(popularity, on="item_id")
        .filter(pl.col("n") < 300)
        .sort("len", descending=True)
    )
    seed, partner, _, _ = cand.row(0)
    seen_with_seed = set(pairs.filter(pl.col("item_id") == seed)["item_id_right"].to_list())
    unrelated = next(i for i in best_sellers if i not in seen_with_seed and i != seed)
    ranked = [r.item_id for r in fbt.recommend(RecContext(seeds=[seed], k=50))]
    assert partner in ranked[:10]
    assert unrelated not in ranked or ranked.index(partner) < ranked.index(unrelated)


def test_next_weeks_baskets_beat_popularity(lines: pl.DataFrame, fbt: BoughtTogetherModel) -> None:
    test = (
        lines.filter(pl.col("week") >= 11)
        .select("basket_id", "item_id")
        .unique()
        .filter(pl.col("item_id").is_in(list(fbt.index)))
        .filter(pl.len().over("basket_id") >= 2)
    )
    baskets = test.group_by("basket_id").agg("item_id")["item_id"].to_list()[:1500]
    res = basket_completion(
        lambda s: [r.item_id for r in fbt.recommend(RecContext(seeds=[s], k=10))], baskets
    )
    top = [str(fbt.items[j]) for j in fbt.popularity.argsort()[::-1][:11]]
    base = basket_completion(lambda s: [i for i in top if i != s][:10], baskets)
    assert res["hr@10"] > base["hr@10"] and res["recall@10"] > base["recall@10"]


def test_fbt_unknown_seed_exclusions_and_round_trip(blob_store: BlobStore, fbt: BoughtTogetherModel) -> None:
    assert fbt.recommend(RecContext(seeds=["0"], k=10)) == []
    seed = str(fbt.items[int(fbt.popularity.argmax())])
    recs = fbt.recommend(RecContext(seeds=[seed], k=10))
    assert len(recs) == 10 and seed not in {r.item_id for r in recs}
    scope = tenant_scope(blob_store, "default")
    loaded = load_recommender(scope, save_model(scope, "default", fbt))
    assert loaded.recommend(RecContext(seeds=[seed], k=10)) == recs


def test_bundle_plans_name_complementary_categories_and_fill_them(
    blob_store: BlobStore, bundles: BundleModel
) -> None:
    assert bundles.plans("0") == []
    seed = bundles.top.filter(pl.col("category") == "FROZEN PIZZA")["item_id"][0]
    plans = bundles.plans(seed)
    assert plans and all(isinstance(p, BundlePlan) and p.name and p.description for p in plans)
    cats = [c.category for p in plans for c in p.categories]
    assert "FROZEN PIZZA" not in cats and len(cats) == len(set(cats))
    for strategy in ("hybrid", "fbt", "top_products"):
        filled = bundles.fill(plans, strategy, 3)
        for plan in filled:
            for c in plan.categories:
                assert 1 <= len(c.products) <= 3
                assert all(bundles.category_of[p.id] == c.category for p in c.products)
    blocked = bundles.fill(plans, "hybrid", 3)[0].categories[0].products[0].id
    again = bundles.fill(plans, "hybrid", 3, allowed=lambda i: i != blocked)
    assert blocked not in {p.id for p in again[0].categories[0].products}
    with pytest.raises(ValueError):
        bundles.fill(plans, "cheapest", 3)  # type: ignore[arg-type]
    scope = tenant_scope(blob_store, "default")
    loaded = load_recommender(scope, save_model(scope, "default", bundles))
    assert loaded.plans(seed) == plans  # type: ignore[attr-defined]


def test_recent_co_purchases_outrank_old_ones() -> None:
    """With ``ts`` on the lines, a partner bought with the seed last month beats one bought a year ago."""
    week = 7 * 86400.0
    rows = []
    for n in range(5):
        rows += [(f"old{n}", "seed", 0.0), (f"old{n}", "stale", 0.0)]
        rows += [(f"new{n}", "seed", 50 * week), (f"new{n}", "fresh", 50 * week)]
    lines = pl.DataFrame(rows, schema=["basket_id", "item_id", "ts"], orient="row")
    ranked = [r.item_id for r in train_fbt(lines, None).recommend(RecContext(seeds=["seed"], k=2))]
    assert ranked == ["fresh", "stale"]
    undated = train_fbt(lines.drop("ts"), None).partners("seed")
    assert undated[0][1] == undated[1][1]


def test_partners_from_quick_trips_outrank_ones_from_large_baskets() -> None:
    """recall@10 credits a hit in a small basket more: a partner bought with the seed on 5 quick trips
    outranks one bought with it in 6 stock-ups (raw co-occurrence would rank the latter first)."""
    rows = []
    for n in range(5):
        rows += [(f"quick{n}", "seed"), (f"quick{n}", "milk")]
    for n in range(6):
        rows += [(f"big{n}", "seed"), (f"big{n}", "flour")] + [
            (f"big{n}", f"filler{n}_{k}") for k in range(10)
        ]
    lines = pl.DataFrame(rows, schema=["basket_id", "item_id"], orient="row")
    ranked = [r.item_id for r in train_fbt(lines, None).recommend(RecContext(seeds=["seed"], k=2))]
    assert ranked == ["milk", "flour"]
