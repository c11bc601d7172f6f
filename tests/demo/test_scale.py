"""``aisle demo scale``: a synthetic catalog from the demo catalogs' vocabulary, reproducible from its seed,
distributed as its source, with a query mix whose words are the catalog's, imported as a searchable
tenant (issue 42). Small N only; speed is measured, never asserted."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from aisle.cli import app, register_commands
from aisle.demo.scale import AVAILABILITY, AVAILABILITY_SHARE, HOME, ScaleFiles, write_scale_catalog
from aisle.demo.scale_source import FASHION, SourcePool, load_source

register_commands()
runner = CliRunner()
N = 2000


def share(mask: pl.Series) -> float:
    """The share of true values of a boolean column (nulls count as false)."""
    return float(mask.fill_null(False).sum()) / mask.len()


@pytest.fixture(scope="module")
def pool(shared_data: Path) -> SourcePool:
    return load_source(shared_data)


@pytest.fixture(scope="module")
def generated(pool: SourcePool, tmp_path_factory: pytest.TempPathFactory) -> tuple[ScaleFiles, pl.DataFrame]:
    files = write_scale_catalog(pool, tmp_path_factory.mktemp("scale"), 6000, seed=7, batch=1500)
    return files, pl.read_parquet(files.catalog)


def test_the_same_seed_writes_the_same_bytes_and_another_seed_other_products(
    pool: SourcePool, tmp_path: Path
) -> None:
    first = write_scale_catalog(pool, tmp_path / "a", N, seed=3, batch=500)
    again = write_scale_catalog(pool, tmp_path / "b", N, seed=3, batch=500)
    other = write_scale_catalog(pool, tmp_path / "c", N, seed=4, batch=500)
    assert first.catalog.read_bytes() == again.catalog.read_bytes()
    assert first.queries.read_text() == again.queries.read_text()
    a, c = pl.read_parquet(first.catalog), pl.read_parquet(other.catalog)
    assert a.height == c.height == N
    assert a["id"].to_list() == c["id"].to_list()  # ids are positions; the products differ
    assert share(a["name"] != c["name"]) > 0.9


def test_every_product_has_an_id_a_title_and_a_price_and_ids_are_unique(
    generated: tuple[ScaleFiles, pl.DataFrame],
) -> None:
    _, catalog = generated
    assert catalog.height == 6000
    assert catalog["id"].n_unique() == catalog.height
    for column in ("id", "name", "price", "availability", "article_type", "master_category"):
        assert catalog[column].null_count() == 0, column
    assert (catalog["name"].str.len_chars() > 3).all()
    assert (catalog["price"] > 0).all() and (catalog["discounted_price"] <= catalog["price"]).all()


def test_brands_families_prices_and_availability_follow_the_source(
    pool: SourcePool, generated: tuple[ScaleFiles, pl.DataFrame]
) -> None:
    _, catalog = generated
    source = pool.rows
    top_brand, top_count = Counter(source["brand"].drop_nulls().to_list()).most_common(1)[0]
    assert abs(share(catalog["brand"] == top_brand) - top_count / source.height) < 0.01
    assert abs(share(catalog["master_category"] != HOME) - share(source["family"] == FASHION)) < 0.03
    top_colour = source.filter(pl.col("family") == FASHION)["colour"].mode()[0]
    assert catalog.filter(pl.col("master_category") != HOME)["colour"].mode()[0] == top_colour
    fashion = catalog.filter(pl.col("master_category") != HOME)["price"]
    source_median = float(np.median(pool.fashion_prices))
    assert abs(float(np.median(fashion.to_numpy())) / source_median - 1) < 0.15
    shares = catalog["availability"].value_counts(normalize=True)
    observed = dict(zip(shares["availability"].to_list(), shares["proportion"].to_list(), strict=True))
    assert set(observed) == set(AVAILABILITY)
    for value, expected in zip(AVAILABILITY, AVAILABILITY_SHARE, strict=True):
        assert abs(observed[value] - expected) < 0.02, value


def test_the_query_mix_is_made_of_the_catalogs_words(generated: tuple[ScaleFiles, pl.DataFrame]) -> None:
    files, catalog = generated
    queries = files.queries.read_text().splitlines()
    assert len(queries) == files.query_count == 1000 and all(queries)
    text = catalog.select(
        pl.concat_str(["name", "brand", "colour", "article_type"], separator=" ", ignore_nulls=True)
    )
    vocabulary = {w for line in text.to_series().to_list() for w in line.lower().split()}
    words = [q.split() for q in queries]
    assert all(any(w in vocabulary for w in q) for q in words)  # a typo keeps one word of the catalog
    whole = sum(all(w in vocabulary for w in q) for q in words) / len(words)
    assert 0.75 < whole < 0.97  # the Home Depot mix misspells a quarter of its queries
    assert len(set(queries)) > 300  # a mix, not one query repeated


def test_aisle_demo_scale_writes_a_tenant_that_searches(shared_data: Path, tmp_path: Path) -> None:
    env = {
        "AISLE_STORAGE_URL": f"file://{tmp_path / 'bucket'}",
        "AISLE_DATA_DIR": str(tmp_path / "data"),
        "AISLE_REDIS_URL": "",
    }
    out = tmp_path / "out"
    made = runner.invoke(
        app,
        ["demo", "scale", "--tenant", "big", "--products", str(N), "--seed", "5", "--data-dir",
         str(shared_data), "--out", str(out)],
        env=env,
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert f"imported and indexed {N} products" in made.stdout
    assert (out / "catalog.parquet").exists() and (out / "queries.txt").exists()
    found = runner.invoke(app, ["search", "big", "nike tshirts", "--facet", "availability"], env=env)
    assert found.exit_code == 0, found.output
    body = json.loads(found.stdout)
    assert body["total"] > 0 and body["products"][0]["brand"] == "Nike"
    assert {f["value"] for f in body["facets"]["availability"]} <= set(AVAILABILITY)
    assert body["facets"]["availability"]


def test_no_import_writes_the_files_only(shared_data: Path, tmp_path: Path) -> None:
    env = {"AISLE_STORAGE_URL": f"file://{tmp_path / 'bucket'}", "AISLE_DATA_DIR": str(tmp_path / "data")}
    args = ["demo", "scale", "--products", "300", "--no-import", "--data-dir", str(shared_data)]
    made = runner.invoke(app, [*args, "--out", str(tmp_path / "out")], env=env)
    assert made.exit_code == 0, made.output
    assert "imported" not in made.stdout and (tmp_path / "out" / "catalog.parquet").exists()
    assert not (tmp_path / "bucket").exists()
