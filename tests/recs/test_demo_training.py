"""``train_demo_models``: trains the demo tenants' models once, reuses them on the next run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from tests.support.vectors import mini_fashion

from aisle.catalog.datasets import fashion, yoochoose
from aisle.catalog.store import CatalogStore
from aisle.core.storage import BlobStore, open_blob_store
from aisle.core.tenancy import Tenants, tenant_scope
from aisle.demo.recs import train_demo_models
from aisle.recs import popularity_store
from aisle.recs.evaluation.offline import read_fashion
from aisle.recs.loading import load_recommender
from aisle.recs.models.base import ModelType, RecContext
from aisle.vectors.table import VectorTable, latest_table


def test_demo_models_are_trained_once_then_reused(blob_store: BlobStore, shared_data: Path) -> None:
    tenants = Tenants(blob_store)
    tenants.write_config("fashion", fashion.configs())
    tenants.write_config("yoochoose", yoochoose.configs())
    products = read_fashion(shared_data).head(400).rename({"name": "title", "colour": "color"})
    CatalogStore(tenant_scope(blob_store, "fashion")).write(products)
    messages: list[str] = []
    first = train_demo_models(blob_store, shared_data, progress=messages.append)
    assert {r.model_type for r in first["fashion"]} == {ModelType.SIMILAR_ITEMS, ModelType.GOOD_BETTER_BEST}
    assert [r.model_type for r in first["yoochoose"]] == [ModelType.CUSTOMERS_ALSO_VIEW]
    assert "default" not in first and any("'default' does not exist" in m for m in messages)
    views = tenant_scope(blob_store, "yoochoose")
    assert popularity_store.current_version(views) == 1  # the same views give predict its backfill order

    before = len(messages)
    second = train_demo_models(blob_store, shared_data, progress=messages.append)
    # nothing is trained again: the same records come back (bench/, not this test, says how fast)
    assert second == first and not any("training" in m for m in messages[before:])
    assert popularity_store.current_version(views) == 1
    assert sum("up to date" in m for m in messages) == 3

    scope = tenant_scope(blob_store, "fashion")
    similar = next(r for r in second["fashion"] if r.model_type is ModelType.SIMILAR_ITEMS)
    seed = products["id"][0]
    recs = load_recommender(scope, similar).recommend(RecContext(seeds=[seed], k=5))
    assert len(recs) == 5 and seed not in {r.item_id for r in recs}

    # a new catalog version makes the fashion models stale: they are retrained as version 2
    CatalogStore(scope).write(products.with_columns(pl.col("price") * 2))
    third = train_demo_models(blob_store, shared_data, progress=messages.append)
    assert {r.version for r in third["fashion"]} == {2} and third["yoochoose"] == first["yoochoose"]


def test_similar_items_reuses_the_vector_search_embeddings(
    tmp_path_factory: pytest.TempPathFactory, shared_data: Path
) -> None:
    """SIMILAR_ITEMS takes the text vectors vector search built for the catalog (real MiniLM) instead of
    encoding the catalog a second time; without a table for the current catalog it encodes as before."""
    mini = mini_fashion(tmp_path_factory.mktemp("similar-reuse"), shared_data, products=60, images=False)
    store = open_blob_store(mini.storage_url)
    scope = tenant_scope(store, "fashion")
    messages: list[str] = []
    records = train_demo_models(store, None, vectors_dir=mini.data_dir, progress=messages.append)
    similar = next(r for r in records["fashion"] if r.model_type is ModelType.SIMILAR_ITEMS)
    assert any("using 60 precomputed product vectors" in m for m in messages)
    assert not any("with MiniLM" in m for m in messages)  # not encoded again
    model = load_recommender(scope, similar)
    table = VectorTable.load(latest_table(mini.data_dir, "fashion", "text"))
    keys = np.array([table.key_of[str(i)] for i in model.items.tolist()])
    np.testing.assert_allclose(model.vectors, table.ann.vectors_of(keys), atol=1e-6)

    # a new catalog version has no table yet: the model encodes the products itself
    catalog = CatalogStore(scope).load()
    CatalogStore(scope).write(catalog.products.with_columns(pl.col("price") * 2))
    messages.clear()
    again = train_demo_models(store, None, vectors_dir=mini.data_dir, progress=messages.append)
    assert any("encoding 60 products" in m for m in messages)
    assert not any("precomputed" in m for m in messages)
    assert next(r for r in again["fashion"] if r.model_type is ModelType.SIMILAR_ITEMS).version == 2
