"""Spark-trained and embedded models are the same on real data slices (issue 21, "Training on Spark").

Spark runs in local mode (``local[2]``, one session for the module); the data are written as Parquet
to a temp folder and read back by Spark, as ``aisle train --engine spark`` reads the bucket. Both
engines share each model's scoring; only the counting differs, so lists and scores must agree up to
the float rounding of sums taken in another order ("ties aside": partners whose scores tie may swap).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl
import pytest
from tests.conftest import require
from tests.support.spark import local_spark

from aisle.recs.models.bought_together import BoughtTogetherParams, train_bought_together

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

TRAIN_WEEKS = 3  # weeks 1-2 train (3,301 baskets; weeks 1-4, 9,151, took 22 s more), 3-4 test
pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning"),
]


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    """One local Spark session for the module (skips, or fails in CI, without Java or pyspark)."""
    with local_spark(2, 4) as session:
        yield session


def _parquet(spark: SparkSession, df: pl.DataFrame, folder: Path) -> Any:
    """``df`` written as Parquet under ``folder`` and read back by Spark (a Spark DataFrame)."""
    folder.mkdir(parents=True, exist_ok=True)
    df.write_parquet(folder / "part-0.parquet")
    return spark.read.parquet(f"file://{folder}")


def _same_lists(ptr, idx, score, ptr2, idx2, score2, rtol: float = 1e-6) -> None:
    """Same list lengths and scores; partners tied on the score may come in another order, and the
    pick among ties at a list's end may differ."""
    assert np.array_equal(ptr, ptr2)
    np.testing.assert_allclose(score2, score, rtol=rtol, atol=0)
    for row in np.unique(np.searchsorted(ptr, np.flatnonzero(idx != idx2), side="right") - 1):
        lo, hi = ptr[row], ptr[row + 1]
        s = score[lo:hi]
        for value in np.unique(s):
            tied = np.isclose(s, value, rtol=rtol, atol=0)
            if tied[-1]:
                continue  # the tie group cut by the list's length
            assert set(idx[lo:hi][tied].tolist()) == set(idx2[lo:hi][tied].tolist()), f"row {row} differs"


@pytest.fixture(scope="module")
def cj_lines() -> pl.DataFrame:
    from aisle.recs.events import completejourney_lines

    return completejourney_lines(max_week=TRAIN_WEEKS).select("basket_id", "item_id", "ts")


@pytest.fixture(scope="module")
def cj_categories() -> pl.DataFrame:
    from aisle.recs.events import completejourney_categories

    return completejourney_categories()


def test_bought_together_same_on_both_engines(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, cj_lines: pl.DataFrame, cj_categories
) -> None:
    from aisle.recs.evaluation import basket_completion
    from aisle.recs.evaluation.offline import partner_ids
    from aisle.recs.events import completejourney_lines
    from aisle.recs.spark.bought_together import train_bought_together_spark

    lines = _parquet(spark, cj_lines, tmp_path_factory.mktemp("cj") / "lines")
    params = BoughtTogetherParams()
    want = train_bought_together(cj_lines, cj_categories, params)
    got = train_bought_together_spark(lines, cj_categories, params)
    assert np.array_equal(got.items, want.items)
    np.testing.assert_array_equal(got.popularity, want.popularity)
    _same_lists(want.nb_ptr, want.nb_idx, want.nb_score, got.nb_ptr, got.nb_idx, got.nb_score)
    test = (
        completejourney_lines(min_week=TRAIN_WEEKS, max_week=TRAIN_WEEKS + 2)
        .select("basket_id", "item_id")
        .unique()
        .filter(pl.col("item_id").is_in(want.items.tolist()))
        .filter(pl.len().over("basket_id") >= 2)
    )
    baskets = test.group_by("basket_id").agg("item_id")["item_id"].to_list()
    quality = [basket_completion(partner_ids(m), baskets, cutoff=10) for m in (want, got)]
    assert quality[0]["pairs"] > 1000
    assert quality[1] == pytest.approx(quality[0], rel=1e-3)


def test_bought_together_same_without_time_and_with_min_support(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, cj_lines: pl.DataFrame
) -> None:
    from aisle.recs.spark.bought_together import train_bought_together_spark

    few = cj_lines.filter(pl.col("basket_id").hash() % 4 == 0)
    params = BoughtTogetherParams(min_support=2, category_candidates=5, neighbours=20)
    lines = _parquet(spark, few.drop("ts"), tmp_path_factory.mktemp("cj") / "few")
    want = train_bought_together(few.drop("ts"), None, params)
    got = train_bought_together_spark(lines, None, params)
    assert np.array_equal(got.items, want.items)
    _same_lists(want.nb_ptr, want.nb_idx, want.nb_score, got.nb_ptr, got.nb_idx, got.nb_score)


def test_also_view_same_on_both_engines(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, shared_data: Path
) -> None:
    from aisle.recs.evaluation import session_next_item
    from aisle.recs.events import yoochoose_events
    from aisle.recs.spark.also_view import train_session_knn_spark
    from aisle.recs.training import train_also_view

    require((shared_data / "yoochoose").is_dir(), "YooChoose sessions not found under the shared data")
    views = yoochoose_events(shared_data).with_row_index("seq")
    want = train_also_view(views)
    got = train_session_knn_spark(_parquet(spark, views, tmp_path_factory.mktemp("yc") / "views"))
    got_arrays = got.to_arrays()
    for name, array in want.to_arrays().items():  # sessions, item index, IDF, precomputed neighbours
        if array.dtype.kind == "f":
            np.testing.assert_allclose(got_arrays[name], array, rtol=1e-12, err_msg=name)
        else:
            np.testing.assert_array_equal(got_arrays[name], array, err_msg=name)
    test = yoochoose_events(shared_data, "test").select("session_id", "item_id", "ts")
    test = test.filter(pl.col("session_id").is_in(test["session_id"].unique().sort()[:400].implode()))
    quality = ("hr@20", "mrr@20", "events")
    want_q, got_q = (session_next_item(m.scores, m.index, test) for m in (want, got))
    assert want_q["events"] > 100
    assert {k: got_q[k] for k in quality} == {k: want_q[k] for k in quality}


def test_bundles_same_on_both_engines(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, cj_lines: pl.DataFrame, cj_categories
) -> None:
    from aisle.recs.models.bundles import train_bundles
    from aisle.recs.spark.bundles import train_bundles_spark

    lines = cj_lines.select("basket_id", "item_id")
    want = train_bundles(lines, cj_categories)
    got = train_bundles_spark(
        _parquet(spark, lines, tmp_path_factory.mktemp("cj") / "bundles"), cj_categories
    )
    assert want.complements.height > 50 and want.cat_item.height > 1000
    for name, table in want.tables().items():
        other = got.tables()[name]
        assert other.columns == table.columns
        assert other.drop([c for c in ("score", "p") if c in table.columns]).equals(
            table.drop([c for c in ("score", "p") if c in table.columns])
        ), name
        for column in ("score", "p"):
            if column in table.columns:
                np.testing.assert_allclose(other[column].to_numpy(), table[column].to_numpy(), rtol=1e-12)


def test_good_better_best_same_on_both_engines(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, cj_lines: pl.DataFrame, cj_categories
) -> None:
    """Tiers of a catalog priced from the baskets (median unit price), best sellers by baskets."""
    from aisle.recs.events import completejourney_lines, priced_catalog
    from aisle.recs.models.good_better_best import train_good_better_best
    from aisle.recs.spark.good_better_best import train_good_better_best_spark

    catalog, popularity = priced_catalog(completejourney_lines(max_week=TRAIN_WEEKS), cj_categories)
    folder = tmp_path_factory.mktemp("gbb")
    want = train_good_better_best(catalog, popularity)
    got = train_good_better_best_spark(
        _parquet(spark, catalog, folder / "catalog"), _parquet(spark, popularity, folder / "popularity")
    )
    assert (want.products["tier"] >= 0).sum() > 1000
    assert got.products.columns == want.products.columns
    assert got.products.equals(want.products)
    for seed in want.ids[::50]:
        assert got.tiers(seed) == want.tiers(seed)


@pytest.mark.parametrize("model_type", ["FREQUENTLY_BOUGHT_TOGETHER", "GOOD_BETTER_BEST"])
def test_aisle_train_on_spark_registers_what_the_embedded_engine_would(
    spark: SparkSession, tmp_path: Path, model_type: str
) -> None:
    """``aisle train --engine spark`` exports the baskets as Parquet to the tenant's bucket, trains on
    them and registers a model the predict service loads; it recommends what the embedded one does."""
    from tests.support.recs import write_tenant
    from typer.testing import CliRunner

    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.recs.events import completejourney_categories, completejourney_lines
    from aisle.recs.loading import load_recommender
    from aisle.recs.models.base import RecContext
    from aisle.recs.registry import ModelRegistry

    store = open_blob_store(f"file://{tmp_path / 'bucket'}")
    sold = completejourney_lines(max_week=3)
    catalog = (
        sold.filter(pl.col("price") > 0)
        .group_by("item_id")
        .agg(price=pl.col("price").median())
        .join(completejourney_categories(), on="item_id")
        .select(id="item_id", title="item_id", price="price", product_category="category")
    )
    write_tenant(store, "shop", catalog)
    env = {"AISLE_STORAGE_URL": f"file://{tmp_path / 'bucket'}", "AISLE_DATA_DIR": str(tmp_path / "data")}
    app = _cli()
    runner = CliRunner()
    records = {}
    for engine in ("embedded", "spark"):
        args = ["train", model_type, "--tenant", "shop", "--max-week", "3", "--engine", engine]
        result = runner.invoke(app, [*args, "--model-id", f"m-{engine}"], env=env)
        assert result.exit_code == 0, result.output
        scope = Tenants(store, ttl=0).scope("shop")
        records[engine] = ModelRegistry(scope).get(f"m-{engine}")
    assert records["spark"].params["info"]["engine"] == "spark"
    if model_type != "GOOD_BETTER_BEST":
        assert any(scope.list("datasets/completejourney-lines-w3/"))
    want, got = (load_recommender(scope, records[e]) for e in ("embedded", "spark"))
    seeds = catalog["id"].to_list()[::25]
    same = answered = 0
    for seed in seeds:
        a, b = (m.recommend(RecContext(seeds=[seed], k=10)) for m in (want, got))
        assert [x.score for x in b] == pytest.approx([x.score for x in a], rel=1e-5)
        same += [x.item_id for x in a] == [x.item_id for x in b]
        answered += bool(a)
    assert answered >= 0.2 * len(seeds)
    assert same >= 0.95 * len(seeds)  # lists may differ among tied scores only


def _cli() -> Any:
    """The ``aisle`` app with the recommendation commands (``train``, ``eval recs``)."""
    import typer

    from aisle.cli.recs import register

    app, eval_app = typer.Typer(), typer.Typer()
    app.add_typer(eval_app, name="eval")
    register(app, eval_app)
    return app


def test_aisle_train_on_spark_names_missing_input(spark: SparkSession, tmp_path: Path) -> None:
    from tests.support.recs import write_tenant
    from typer.testing import CliRunner

    from aisle.core.storage import open_blob_store

    write_tenant(
        open_blob_store(f"file://{tmp_path / 'bucket'}"), "shop", pl.DataFrame({"id": ["1"], "title": ["a"]})
    )
    env = {"AISLE_STORAGE_URL": f"file://{tmp_path / 'bucket'}", "AISLE_DATA_DIR": str(tmp_path / "data")}
    missing = tmp_path / "no-such-lines"
    args = [
        "train",
        "FREQUENTLY_BOUGHT_TOGETHER",
        "--tenant",
        "shop",
        "--engine",
        "spark",
        "--input",
        str(missing),
    ]
    result = CliRunner().invoke(_cli(), args, env=env)
    assert result.exit_code == 2, result.output
    assert f"no Parquet to train from at {missing}" in result.output
    assert "PATH_NOT_FOUND" in result.output
