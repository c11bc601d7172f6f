"""One training of ``bench_spark`` in a process of its own, so its peak memory is its own.

``python -m bench.spark_train_child ENGINE MODEL FOLDER [--spark-memory 4g]``: ENGINE is ``embedded``
or ``spark``, MODEL a model type of ``bench_spark.MODELS``, FOLDER the Parquet inputs written by
:func:`bench.spark_scale.write_inputs` (``lines/``, ``categories/``, ``catalog/``, ``popularity/``,
``views/``). Prints one JSON line: ``seconds`` (reading the Parquet and training; not starting the
JVM), ``peak`` (this process's peak RSS in bytes) and ``size`` (rows of the model: partners,
complements + shares, products, sessions), so the two engines' models can be compared at a glance.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any


def _size(model: Any) -> int:
    """Rows of a trained model (partners of FBT, complements and item shares of bundles, products of
    GOOD_BETTER_BEST, sessions of CUSTOMERS_ALSO_VIEW)."""
    if hasattr(model, "nb_ptr"):
        return len(model.nb_idx)
    if hasattr(model, "complements"):
        return int(model.complements.height + model.cat_item.height)
    if hasattr(model, "products"):
        return int(model.products.height)
    return len(model.sess_ptr) - 1


def train_embedded(model: str, folder: Path) -> Any:
    import polars as pl

    from aisle.recs.models.also_view import train_session_knn
    from aisle.recs.models.bought_together import train_bought_together
    from aisle.recs.models.bundles import train_bundles
    from aisle.recs.models.good_better_best import train_good_better_best

    def read(name: str) -> pl.DataFrame:
        return pl.read_parquet(folder / name)

    if model == "FREQUENTLY_BOUGHT_TOGETHER":
        return train_bought_together(read("lines").select("basket_id", "item_id", "ts"), read("categories"))
    if model == "BUNDLE_RECOMMENDATIONS":
        return train_bundles(read("lines").select("basket_id", "item_id"), read("categories"))
    if model == "GOOD_BETTER_BEST":
        return train_good_better_best(read("catalog"), read("popularity"))
    return train_session_knn(read("views"))


def train_on_spark(model: str, folder: Path, spark: Any) -> Any:
    import polars as pl

    from aisle.recs.spark.also_view import train_session_knn_spark
    from aisle.recs.spark.bought_together import train_bought_together_spark
    from aisle.recs.spark.bundles import train_bundles_spark
    from aisle.recs.spark.good_better_best import train_good_better_best_spark

    def read(name: str) -> Any:
        return spark.read.parquet(str(folder / name))

    categories = pl.read_parquet(folder / "categories")  # catalog-sized: the driver reads it
    if model == "FREQUENTLY_BOUGHT_TOGETHER":
        return train_bought_together_spark(read("lines").select("basket_id", "item_id", "ts"), categories)
    if model == "BUNDLE_RECOMMENDATIONS":
        return train_bundles_spark(read("lines").select("basket_id", "item_id"), categories)
    if model == "GOOD_BETTER_BEST":
        return train_good_better_best_spark(read("catalog"), read("popularity"))
    return train_session_knn_spark(read("views"))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.spark_train_child")
    parser.add_argument("engine", choices=("embedded", "spark"))
    parser.add_argument("model")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--spark-memory", default="4g")
    args = parser.parse_args()
    if args.engine == "embedded":
        start = time.perf_counter()
        model = train_embedded(args.model, args.folder)
    else:
        from aisle.recs.spark.session import spark_session

        spark = spark_session(None, {"spark.driver.memory": args.spark_memory})
        spark.sparkContext.setLogLevel("ERROR")
        start = time.perf_counter()
        model = train_on_spark(args.model, args.folder, spark)
    seconds = time.perf_counter() - start
    # this process's own peak RSS (wait4's ru_maxrss would also count the parent's, kept across exec)
    status = Path("/proc/self/status").read_text()
    peak = int(status.split("VmHWM:")[1].split()[0]) * 1024
    print(json.dumps({"seconds": seconds, "size": _size(model), "peak": peak}), flush=True)
    if args.engine == "spark":
        spark.stop()


if __name__ == "__main__":
    main()
