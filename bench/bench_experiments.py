"""A/B experiment figures (issue 29): assignment, false positives, power, SRM, serving cost, the demo.

    python -m bench --only bench_experiments
    AISLE_BENCH_EXPERIMENT_DEMO=0 python -m bench --only bench_experiments   # without the demo part

All simulations use fixed seeds. The demo part imports the Home Depot catalog into a temporary bucket,
trains its learned ranker on the dev judgments (minutes) and runs the demo experiment (the ranker
against none, simulated visitors whose clicks come from the judgments through the analytics demo's click
model): its figures are *simulated* and labelled so.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from scipy import stats

from aisle.experiments import statistics as st
from aisle.experiments.analysis import analyse
from aisle.experiments.assignment import assign_many
from aisle.experiments.model import Experiment, Variant


def _experiment(n: int = 2) -> Experiment:
    now = datetime.now(UTC)
    variants = [Variant(id="control" if i == 0 else f"b{i}") for i in range(n)]
    return Experiment(
        name="bench", variants=variants, id="e", version=1, salt="s", createdAt=now, updatedAt=now
    )


def _visitors(rng: np.random.Generator, n: int, conversion: float) -> st.VisitorTotals:
    searches = 1 + rng.poisson(2.0, n)
    clicked = rng.binomial(searches, rng.beta(1.2, 2.8, n))
    converted = rng.binomial(1, conversion, n)
    return st.VisitorTotals(searches, clicked, converted, converted * rng.lognormal(3.5, 1.0, n))


def _rate(hits: int, n: int) -> str:
    low, high = stats.binomtest(hits, n).proportion_ci(0.95, method="wilson")
    return f"{hits / n:.2%} [{low:.2%}, {high:.2%}]"


def assignment() -> None:
    ids = [f"visitor-{i}" for i in range(1_000_000)]
    start = time.perf_counter()
    arms = assign_many("bench-a", [0.5, 0.5], ids)
    took = time.perf_counter() - start
    counts = np.bincount(arms, minlength=2)
    srm = st.sample_ratio(counts.tolist(), [1, 1])
    print(
        f"assignment of 1,000,000 ids 50/50: {counts.tolist()}, SRM chi2 {srm.chi2:.2f} p={srm.p_value:.3f}"
        f" ({took / len(ids) * 1e6:.2f} us per visitor)"
    )
    other = assign_many("bench-b", [0.5, 0.5], ids)
    table = np.zeros((2, 2))
    np.add.at(table, (arms, other), 1)
    print(f"two experiments, independence chi-square p={stats.chi2_contingency(table)[1]:.3f}")
    five = np.bincount(assign_many("bench-5", [0.1, 0.2, 0.3, 0.2, 0.2], ids[:200_000]), minlength=5)
    print(
        f"five variants 10/20/30/20/20 on 200,000 ids: {five.tolist()}, "
        f"SRM p={st.sample_ratio(five.tolist(), [1, 2, 3, 2, 2]).p_value:.3f}"
    )


def false_positives(runs: int = 2000, n: int = 2000) -> None:
    rng = np.random.default_rng(29)
    exp = _experiment()
    hits = {"conversionRate": 0, "clickThroughRate": 0, "revenuePerVisitor": 0}
    for _ in range(runs):
        body = analyse(exp, {"control": _visitors(rng, n, 0.08), "b1": _visitors(rng, n, 0.08)})
        for metric in hits:
            hits[metric] += body["variants"][1]["vsControl"][metric]["significant"]
    for metric, count in hits.items():
        print(f"A/A false-positive rate, {metric}, {runs} tests of {n}+{n} visitors: {_rate(count, runs)}")
    rng = np.random.default_rng(30)
    exp4 = _experiment(4)
    any_hit = 0
    for _ in range(runs // 2):
        body = analyse(exp4, {v.id: _visitors(rng, n, 0.08) for v in exp4.variants})
        any_hit += any(v["vsControl"]["conversionRate"]["significant"] for v in body["variants"][1:])
    print(f"A/A/A/A (three treatments, BH): a false winner in {_rate(any_hit, runs // 2)} of tests")


def power(runs: int = 2000) -> None:
    for baseline in (0.03, 0.05, 0.10):
        n = st.sample_size(baseline, 0.05)
        rng = np.random.default_rng(int(baseline * 1000))
        a = rng.binomial(n, baseline, runs)
        b = rng.binomial(n, baseline * 1.05, runs)
        found = sum(
            st.proportions_diff(int(x), n, int(y), n).p_value < 0.05 and y > x
            for x, y in zip(a, b, strict=True)
        )
        print(
            f"+5% relative lift on {baseline:.0%} conversion, n={n:,} per variant (estimated for power 0.8):"
            f" detected in {_rate(found, runs)}"
        )


def sample_ratio(runs: int = 1000) -> None:
    rng = np.random.default_rng(52)
    for share, n in ((0.52, 10_000), (0.51, 10_000), (0.505, 100_000), (0.50, 10_000)):
        flagged = 0
        for _ in range(runs):
            first = int(rng.binomial(n, share))
            flagged += st.sample_ratio([first, n - first], [1, 1]).mismatch
        print(
            f"SRM warning on a {share:.1%}/{1 - share:.1%} split of a 50/50 test, {n:,} visitors: "
            f"{_rate(flagged, runs)}"
        )


def analysis_cost() -> None:
    rng = np.random.default_rng(1)
    exp = _experiment(3)
    data = {v.id: _visitors(rng, 100_000, 0.05) for v in exp.variants}
    times = []
    for _ in range(5):
        start = time.perf_counter()
        analyse(exp, data)
        times.append(time.perf_counter() - start)
    print(f"results statistics of 300,000 visitors (3 variants): {statistics.median(times) * 1000:.0f} ms")


def demo(data_dir: Path) -> None:
    from aisle.analytics.engine import AnalyticsEngine
    from aisle.core.config import Settings
    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.demo import import_demo_catalogs
    from aisle.demo.experiment import build_demo_experiment
    from aisle.demo.ranker import train_demo_rankers
    from aisle.experiments.store import ExperimentStore

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(storage_url=f"file://{tmp}/bucket", data_dir=Path(tmp) / "data", auth="off")
        store = open_blob_store(settings.storage_url)
        tenants = Tenants(store, ttl=0)
        import_demo_catalogs(tenants, settings.data_dir, data_dir, only=["homedepot"], echo=lambda _s: None)
        start = time.perf_counter()
        train_demo_rankers(tenants, settings.data_dir, data_dir, echo=lambda _s: None)
        print(f"demo: Home Depot ranker trained in {time.perf_counter() - start:.0f} s")
        start = time.perf_counter()
        said = build_demo_experiment(settings, tenants, data_dir, lambda *_a: None)
        print(f"demo experiment (simulated): {said} in {time.perf_counter() - start:.0f} s")
        (experiment,) = ExperimentStore(tenants.scope("homedepot")).list()
        body = AnalyticsEngine.from_settings(settings, store, record=False).experiment_results(
            "homedepot", experiment
        )
        for v in body["variants"]:
            line = (
                f"  {v['id']:>10}: {v['visitors']} visitors, {v['searches']} searches, "
                f"CTR {v['clickThroughRate']['value']:.4f} [{v['clickThroughRate']['low']:.4f}, "
                f"{v['clickThroughRate']['high']:.4f}], conversion {v['conversionRate']['value']:.4f}, "
                f"revenue/visitor {v['revenuePerVisitor']['value']:.2f}"
            )
            if "vsControl" in v:
                for m in ("clickThroughRate", "conversionRate", "revenuePerVisitor"):
                    c = v["vsControl"][m]
                    line += f"\n{'':14}{m} vs control: {c['diff']:+.4f} [{c['low']:+.4f}, {c['high']:+.4f}]"
                    line += f" lift {c['lift']:+.1%} p={c['pValue']:.2g} (BH {c['pAdjusted']:.2g})"
            print(line)
        print(
            f"  SRM p={body['sampleRatio']['pValue']:.3f} mismatch={body['sampleRatio']['mismatch']}; "
            f"winner on {body['primaryMetric']}: {body['winner']}"
        )


def main(data_dir: Path) -> None:
    assignment()
    false_positives()
    power()
    sample_ratio()
    analysis_cost()
    if os.environ.get("AISLE_BENCH_EXPERIMENT_DEMO", "1") != "0" and (data_dir / "homedepot").exists():
        demo(data_dir)
