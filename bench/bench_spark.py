"""Training time and peak memory of the four Spark-trainable models, both engines, at 1x and 10x.

Data: Complete Journey weeks < 49, the demo's training weeks (FREQUENTLY_BOUGHT_TOGETHER,
BUNDLE_RECOMMENDATIONS; GOOD_BETTER_BEST on a catalog priced from those baskets, as ``aisle eval
recs``), and YooChoose 100k (CUSTOMERS_ALSO_VIEW). The co-purchase models also run on Complete
Journey enlarged 10 times (and 3 times, embedded only): every household and basket copied under
new ids (:func:`bench.spark_scale.enlarge`), so their counts scale and their distinct pairs do not.

Every training runs in a child process (``bench.spark_train_child``) reading the inputs as Parquet
from a temp folder, capped by ``--embedded-timeout`` / ``--spark-timeout`` (a run over its cap is
killed and printed as "did not finish in N s"). Wall time is the child's reading and training (not
starting the JVM); peak memory is the summed peak RSS of its processes (``bench.spark_scale``).
Spark runs ``local[*]`` (``SPARK_MASTER`` overrides) with ``--spark-memory`` of driver memory. From
the embedded engine's peaks a line ``peak = a + b * scale`` per model says at which enlargement it
would pass ``--ram-gb`` of RAM. Skipped without pyspark (the ``spark`` extra) or Java.

``python -m bench.bench_spark --data-dir ../shared/data [--spark-timeout 900] [--spark-scales 1,10]``
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import tempfile
from pathlib import Path

from bench.spark_scale import GB, Run, measure, write_inputs

MODELS = (
    "FREQUENTLY_BOUGHT_TOGETHER",
    "BUNDLE_RECOMMENDATIONS",
    "GOOD_BETTER_BEST",
    "CUSTOMERS_ALSO_VIEW",
)
ENLARGED = MODELS[:2]  # the other two do not train on the purchase lines
LINES_1X = 1_326_320  # distinct (basket, item) lines of Complete Journey weeks < 49


def _cell(run: Run, timeout: float) -> str:
    if run.status == "timeout":
        return f"did not finish in {timeout:.0f} s"
    if run.status == "failed":
        return f"failed: {run.error}"
    return f"{run.seconds:8.1f} {run.peak / GB:8.2f} {run.jvm_peak / GB:6.2f} {run.size:>10,}"


def _fit_line(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least-squares ``(a, b)`` of ``y = a + b * x`` over ``(x, y)`` points (two or more)."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    b = sum((x - mx) * (y - my) for x, y in points) / sxx
    return my - b * mx, b


def _extrapolate(runs: dict[tuple[str, str, int], Run], ram_gb: float) -> None:
    print(f"\nembedded engine: peak = a + b * scale (least squares), and where it passes {ram_gb:g} GB")
    for model in ENLARGED:
        points = [
            (scale, run.peak / GB)
            for (engine, name, scale), run in runs.items()
            if engine == "embedded" and name == model and run.status == "ok"
        ]
        if len(points) < 2:
            print(f"{model:<28} fewer than two finished scales")
            continue
        a, b = _fit_line(sorted(points))
        limit = (ram_gb - a) / b if b > 0 else float("inf")
        print(
            f"{model:<28} a {a:.2f} GB, b {b:.3f} GB per copy: {ram_gb:g} GB at about {limit:.0f}x "
            f"({limit * LINES_1X / 1e6:.0f}M distinct lines)"
        )


def main(
    data_dir: Path,
    spark_timeout: float = 900.0,
    embedded_timeout: float = 600.0,
    embedded_scales: tuple[int, ...] = (1, 3, 10),
    spark_scales: tuple[int, ...] = (1, 10),
    spark_memory: str = "4g",
    ram_gb: float = 16.0,
    models: tuple[str, ...] = MODELS,
) -> None:
    if importlib.util.find_spec("pyspark") is None or shutil.which("java") is None:
        print("skipped: needs the spark extra and Java 17+")
        return
    tmp = Path(tempfile.mkdtemp(prefix="aisle-bench-spark-"))
    try:
        folders = write_inputs(tmp, data_dir, sorted({*embedded_scales, *spark_scales}))
        plan = [("embedded", s, embedded_timeout) for s in embedded_scales]
        plan += [("spark", s, spark_timeout) for s in spark_scales]
        print(f"Spark {spark_memory} driver memory, master $SPARK_MASTER or local[*]; caps: embedded")
        print(f"{embedded_timeout:.0f} s, Spark {spark_timeout:.0f} s per run; peak = summed peak RSS")
        head = f"{'wall s':>8} {'peak GB':>8} {'JVM GB':>6} {'rows':>10}"
        print(f"{'model':<28} {'data':>4} {'engine':<8} {head}")
        runs: dict[tuple[str, str, int], Run] = {}
        for engine, scale, timeout in plan:
            for model in [m for m in models if scale == 1 or m in ENLARGED]:
                args = [engine, model, str(folders[scale])]
                if engine == "spark":
                    args += ["--spark-memory", spark_memory]
                run = measure(args, timeout)
                runs[(engine, model, scale)] = run
                print(f"{model:<28} {scale:>3}x {engine:<8} {_cell(run, timeout)}", flush=True)
        _extrapolate(runs, ram_gb)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",") if x)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.bench_spark")
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--spark-timeout", type=float, default=900.0, help="seconds per Spark run")
    parser.add_argument("--embedded-timeout", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--embedded-scales", type=_ints, default=(1, 3, 10), help="e.g. 1,3,10")
    parser.add_argument("--spark-scales", type=_ints, default=(1, 10), help="e.g. 1,10")
    parser.add_argument("--spark-memory", default="4g", help="spark.driver.memory")
    parser.add_argument("--ram-gb", type=float, default=16.0, help="the machine to extrapolate to")
    parser.add_argument("--models", type=lambda t: tuple(t.split(",")), default=MODELS, help="a subset")
    a = parser.parse_args()
    main(
        a.data_dir.resolve(),
        a.spark_timeout,
        a.embedded_timeout,
        a.embedded_scales,
        a.spark_scales,
        a.spark_memory,
        a.ram_gb,
        a.models,
    )
