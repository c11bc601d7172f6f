"""Training time of the four Spark-trainable models with both engines on the full shared data.

Complete Journey weeks < 49 (FREQUENTLY_BOUGHT_TOGETHER, BUNDLE_RECOMMENDATIONS; GOOD_BETTER_BEST on
a catalog priced from those baskets, as ``aisle eval recs``) and YooChoose 100k (CUSTOMERS_ALSO_VIEW).
Spark runs ``local[*]`` (``SPARK_MASTER`` overrides) with a 4 GB driver, from Parquet in a temp
folder; its time includes reading that Parquet and collecting the counts, not starting the JVM.
Skipped without pyspark (the ``spark`` extra) or Java.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(data_dir: Path) -> None:
    import importlib.util

    if importlib.util.find_spec("pyspark") is None or shutil.which("java") is None:
        print("skipped: needs the spark extra and Java 17+")
        return
    from aisle.recs.events import (
        completejourney_categories,
        completejourney_lines,
        priced_catalog,
        yoochoose_events,
    )
    from aisle.recs.models.also_view import train_session_knn
    from aisle.recs.models.bought_together import train_bought_together
    from aisle.recs.models.bundles import train_bundles
    from aisle.recs.models.good_better_best import train_good_better_best
    from aisle.recs.spark.also_view import train_session_knn_spark
    from aisle.recs.spark.bought_together import train_bought_together_spark
    from aisle.recs.spark.bundles import train_bundles_spark
    from aisle.recs.spark.good_better_best import train_good_better_best_spark
    from aisle.recs.spark.session import spark_session

    lines = completejourney_lines(max_week=49)
    cats = completejourney_categories()
    catalog, popularity = priced_catalog(lines, cats)
    views = yoochoose_events(data_dir).with_row_index("seq")
    baskets = lines.select("basket_id", "item_id", "ts")
    spark = spark_session(None, {"spark.driver.memory": "4g"})
    spark.sparkContext.setLogLevel("ERROR")
    tmp = Path(tempfile.mkdtemp(prefix="aisle-bench-spark-"))
    try:
        frames = {"lines": baskets, "catalog": catalog, "popularity": popularity, "views": views}
        for name, frame in frames.items():
            (tmp / name).mkdir()
            frame.write_parquet(tmp / name / "part-0.parquet")

        def read(name: str) -> Any:
            return spark.read.parquet(str(tmp / name))

        runs = {
            "FREQUENTLY_BOUGHT_TOGETHER": (
                lambda: train_bought_together(baskets, cats),
                lambda: train_bought_together_spark(read("lines"), cats),
            ),
            "BUNDLE_RECOMMENDATIONS": (
                lambda: train_bundles(baskets, cats),
                lambda: train_bundles_spark(read("lines"), cats),
            ),
            "GOOD_BETTER_BEST": (
                lambda: train_good_better_best(catalog, popularity),
                lambda: train_good_better_best_spark(read("catalog"), read("popularity")),
            ),
            "CUSTOMERS_ALSO_VIEW": (
                lambda: train_session_knn(views),
                lambda: train_session_knn_spark(read("views")),
            ),
        }
        print(f"Spark {spark.version}, master {spark.sparkContext.master}")
        print(f"{'model':<28} {'embedded s':>11} {'spark s':>9}")
        for name, (embedded, on_spark) in runs.items():
            print(f"{name:<28} {_timed(embedded):>11.1f} {_timed(on_spark):>9.1f}", flush=True)
    finally:
        spark.stop()
        shutil.rmtree(tmp, ignore_errors=True)
