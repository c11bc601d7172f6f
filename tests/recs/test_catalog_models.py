"""SIMILAR_ITEMS and GOOD_BETTER_BEST on a real slice of the fashion catalog, and the text encoder."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from aisle.core.storage import BlobStore
from aisle.core.tenancy import tenant_scope
from aisle.recs.evaluation.offline import read_fashion
from aisle.recs.loading import load_recommender
from aisle.recs.models.base import RecContext
from aisle.recs.models.good_better_best import GoodBetterBestModel
from aisle.recs.models.similar import SimilarItemsModel, product_texts
from aisle.recs.training import save_model, train_gbb, train_similar
from aisle.vectors import TextEncoder


@pytest.fixture(scope="module")
def products(shared_data: Path) -> pl.DataFrame:
    df = read_fashion(shared_data)
    types = ["Tshirts", "Shirts", "Casual Shoes", "Watches", "Handbags", "Kurtas", "Jeans", "Sarees"]
    return (
        df.filter(pl.col("article_type").is_in(types)).group_by("article_type", maintain_order=True).head(150)
    )


@pytest.fixture(scope="module")
def encoder() -> TextEncoder:
    return TextEncoder.load(threads=2)


@pytest.fixture(scope="module")
def similar(products: pl.DataFrame, encoder: TextEncoder) -> SimilarItemsModel:
    vectors = encoder.encode(product_texts(products), batch_size=128)
    return train_similar(products, vectors=vectors)


def test_encoder_gives_unit_vectors_and_puts_paraphrases_close(encoder: TextEncoder) -> None:
    v = encoder.encode(
        ["red running shoes for men", "Nike Men Red Sports Shoes", "women's gold necklace", ""]
    )
    assert v.shape == (4, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2
    assert encoder.encode([]).shape == (0, 384)


def test_similar_items_share_the_seed_type_and_gender(
    products: pl.DataFrame, similar: SimilarItemsModel
) -> None:
    attrs = {r[0]: r[1:] for r in products.select("id", "article_type", "gender").iter_rows()}
    same_type = same_gender = n = 0
    for seed in products["id"].to_list()[::10]:
        recs = similar.recommend(RecContext(seeds=[seed], k=10))
        assert len(recs) == 10 and seed not in {r.item_id for r in recs}
        for r in recs:
            n += 1
            same_type += attrs[r.item_id][0] == attrs[seed][0]
            same_gender += attrs[r.item_id][1] == attrs[seed][1]
    assert same_type / n >= 0.92 and same_gender / n >= 0.95


def test_similar_items_filters_unknown_seed_and_round_trip(
    blob_store: BlobStore, products: pl.DataFrame, similar: SimilarItemsModel
) -> None:
    assert similar.recommend(RecContext(seeds=["no-such-id"], k=5)) == []
    seed = products["id"][0]
    kind = dict(products.select("id", "article_type").iter_rows())
    shoes = similar.recommend(RecContext(seeds=[seed], k=5, allowed=lambda i: kind[i] == "Casual Shoes"))
    assert len(shoes) == 5 and all(
        kind[r.item_id] == "Casual Shoes" for r in shoes
    )  # beyond the precomputed list
    in_cat = similar.neighbours(seed, 30, same_category=True)
    assert len(in_cat) == 30 and all(kind[r.item_id] == kind[seed] for r in in_cat)
    scope = tenant_scope(blob_store, "fashion")
    loaded = load_recommender(scope, save_model(scope, "fashion", similar))
    assert loaded.recommend(RecContext(seeds=[seed], k=10)) == similar.recommend(
        RecContext(seeds=[seed], k=10)
    )


def test_good_better_best_prices_are_ordered_within_the_seed_category(
    blob_store: BlobStore, products: pl.DataFrame
) -> None:
    model: GoodBetterBestModel = train_gbb(products)
    price = dict(products.select("id", "price").iter_rows())
    kind = dict(products.select("id", "article_type").iter_rows())
    three = 0
    for seed in products["id"].to_list()[::15]:
        tiers = model.recommend(RecContext(seeds=[seed], k=3))
        if not tiers:
            continue
        three += len(tiers) == 3
        labels = [t.label for t in tiers]
        assert labels == [x for x in ("good", "better", "best") if x in labels]
        prices = [price[t.item_id] for t in tiers]
        assert all(b >= 1.25 * a for a, b in itertools.pairwise(prices))
        assert all(kind[t.item_id] == kind[seed] for t in tiers) and seed not in {t.item_id for t in tiers}
    assert three >= 25
    assert model.recommend(RecContext(seeds=["no-such-id"], k=3)) == []
    scope = tenant_scope(blob_store, "fashion")
    loaded = load_recommender(scope, save_model(scope, "fashion", model))
    seed = products["id"][0]
    assert loaded.recommend(RecContext(seeds=[seed], k=3)) == model.recommend(RecContext(seeds=[seed], k=3))


def test_a_category_too_small_for_three_tiers_gives_no_tiers() -> None:
    tiny = pl.DataFrame({"id": ["a", "b", "c"], "price": [10.0, 20.0, 40.0], "article_type": ["Caps"] * 3})
    assert train_gbb(tiny).recommend(RecContext(seeds=["a"], k=3)) == []
