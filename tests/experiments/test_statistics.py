"""The statistics, by simulation with fixed seeds: A/A false positives, power at the estimated sample
size, the SRM warning, and the formulas against direct computations."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from scipy import stats

from aisle.experiments import statistics as st
from aisle.experiments.analysis import analyse
from aisle.experiments.model import Experiment, Variant


def experiment(n_variants: int = 2, metric: str = "conversionRate") -> Experiment:
    now = datetime.now(UTC)
    variants = [Variant(id="control" if i == 0 else f"b{i}") for i in range(n_variants)]
    return Experiment(
        name="t",
        variants=variants,
        id="e1",
        version=1,
        salt="s",
        createdAt=now,
        updatedAt=now,
        primaryMetric=metric,
    )


def visitors(rng: np.random.Generator, n: int, conversion: float, ctr: float = 0.3) -> st.VisitorTotals:
    """Simulated visitors: 1 + Poisson(2) searches, clicks per search with a visitor-level propensity
    (so searches of one visitor are correlated), a conversion with probability ``conversion``, and
    log-normal order values."""
    searches = 1 + rng.poisson(2.0, n)
    propensity = rng.beta(ctr * 4, (1 - ctr) * 4, n)
    clicked = rng.binomial(searches, propensity)
    converted = rng.binomial(1, conversion, n)
    revenue = converted * rng.lognormal(3.5, 1.0, n)
    return st.VisitorTotals(searches, clicked, converted, revenue)


def test_aa_tests_have_a_false_positive_rate_between_3_and_7_percent() -> None:
    rng = np.random.default_rng(29)
    exp = experiment()
    positives = {"conversionRate": 0, "clickThroughRate": 0, "revenuePerVisitor": 0}
    runs = 1000
    for _ in range(runs):
        body = analyse(exp, {"control": visitors(rng, 1500, 0.1), "b1": visitors(rng, 1500, 0.1)})
        for metric in positives:
            positives[metric] += body["variants"][1]["vsControl"][metric]["significant"]
    rates = {m: c / runs for m, c in positives.items()}
    assert all(0.03 <= r <= 0.07 for r in rates.values()), rates


def test_a_five_percent_lift_is_found_at_the_estimated_sample_size_at_least_75_percent_of_the_time() -> None:
    baseline, mde = 0.1, 0.05
    n = st.sample_size(baseline, mde)
    h = 2 * np.arcsin(np.sqrt(0.105)) - 2 * np.arcsin(np.sqrt(0.1))  # Cohen's h
    assert n == pytest.approx(2 * ((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) / h) ** 2, abs=1)
    rng = np.random.default_rng(7)
    runs = 1000
    x_control = rng.binomial(n, baseline, runs)
    x_treated = rng.binomial(n, baseline * (1 + mde), runs)
    found = sum(
        st.proportions_diff(int(a), n, int(b), n).p_value < 0.05 and b > a
        for a, b in zip(x_control, x_treated, strict=True)
    )
    assert found / runs >= 0.75, found


def test_a_52_48_split_of_a_50_50_experiment_raises_the_srm_warning() -> None:
    rng = np.random.default_rng(3)
    n = 10_000
    exp = experiment()
    body = analyse(
        exp, {"control": visitors(rng, int(n * 0.52), 0.1), "b1": visitors(rng, int(n * 0.48), 0.1)}
    )
    assert body["sampleRatio"]["mismatch"] is True
    assert body["sampleRatio"]["pValue"] < 0.001
    fair = analyse(exp, {"control": visitors(rng, 5_020, 0.1), "b1": visitors(rng, 4_980, 0.1)})
    assert fair["sampleRatio"]["mismatch"] is False


def test_a_real_lift_wins_and_benjamini_hochberg_adjusts_across_variants() -> None:
    rng = np.random.default_rng(11)
    exp = experiment(3)
    body = analyse(
        exp,
        {
            "control": visitors(rng, 20_000, 0.10),
            "b1": visitors(rng, 20_000, 0.10),
            "b2": visitors(rng, 20_000, 0.13),
        },
    )
    assert body["winner"] == "b2"
    b1, b2 = (body["variants"][i]["vsControl"]["conversionRate"] for i in (1, 2))
    assert b2["significant"] and b2["low"] > 0 and b2["lift"] == pytest.approx(0.3, abs=0.1)
    ps = sorted([b1["pValue"], b2["pValue"]])
    adjusted = sorted([b1["pAdjusted"], b2["pAdjusted"]])
    assert adjusted[0] == pytest.approx(min(ps[0] * 2, ps[1]))  # BH over two tests
    assert adjusted[1] == pytest.approx(ps[1])


def test_the_delta_method_matches_the_spread_of_simulated_ratios() -> None:
    rng = np.random.default_rng(5)
    ratios, variances = [], []
    for _ in range(400):
        v = visitors(rng, 800, 0.1)
        est = st.click_through(v)
        ratios.append(est.value)
        variances.append(((est.high - est.low) / (2 * 1.959964)) ** 2)
    # the delta-method variance agrees with the observed variance of the ratio across repetitions
    assert np.mean(variances) == pytest.approx(np.var(ratios, ddof=1), rel=0.2)


def test_welch_and_winsorising() -> None:
    a = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    b = np.array([2.0, 4.0, 6.0, 8.0, 100.0])
    cmp = st.welch(a, b)
    ref = stats.ttest_ind(b, a, equal_var=False)
    assert cmp.p_value == pytest.approx(ref.pvalue)
    assert cmp.diff == pytest.approx(b.mean() - a.mean())
    cap = st.winsor_cap([a, b], quantile=0.8)
    assert cap == pytest.approx(np.quantile(np.concatenate([a, b]), 0.8))
    assert st.winsorise(b, cap).max() == pytest.approx(cap)


def test_sample_size_refuses_impossible_rates_and_grows_for_smaller_effects() -> None:
    with pytest.raises(ValueError):
        st.sample_size(0.0, 0.05)
    with pytest.raises(ValueError):
        st.sample_size(0.9, 0.2)
    with pytest.raises(ValueError, match="too small"):
        st.sample_size(0.1, 1e-300)
    assert st.sample_size(0.1, 0.02) > st.sample_size(0.1, 0.05) > st.sample_size(0.1, 0.2)


def test_empty_variants_have_no_figures_and_no_winner() -> None:
    body = analyse(experiment(), {})
    assert body["winner"] is None
    assert body["variants"][1]["vsControl"]["conversionRate"]["pValue"] is None
    assert body["variants"][0]["conversionRate"]["value"] is None


@pytest.mark.parametrize(("metric", "mde"), [("clickThroughRate", 0.05), ("revenuePerVisitor", 0.2)])
def test_a_test_is_planned_on_its_primary_metric_and_the_plan_has_the_power_it_promises(
    metric: str, mde: float
) -> None:
    """The sample a test needs is the primary metric's (a click-through test was told the visitors a
    conversion test would need), and at that sample a true lift of the MDE is found about 80% of the
    time."""
    rng = np.random.default_rng(17)
    exp = experiment(metric=metric).model_copy(update={"minimumDetectableEffect": mde})
    arms = {"control": visitors(rng, 3_000, 0.14, ctr=0.43), "b1": visitors(rng, 3_000, 0.14, ctr=0.43)}
    plan = analyse(exp, arms)["sampleSize"]
    assert plan["metric"] == metric and plan["minimumDetectableEffect"] == mde
    control = analyse(exp, arms)["variants"][0]
    assert plan["baseline"] == pytest.approx(control[metric]["value"])
    n = plan["visitorsPerVariant"]
    assert plan["visitorsTotal"] == 2 * n and plan["reached"] is (n <= 3_000)
    conversion_plan = st.sample_size(control["conversionRate"]["value"], mde)
    assert n != conversion_plan
    runs, found = 300, 0
    for _ in range(runs):
        c = visitors(rng, n, 0.14, ctr=0.43)
        # the lift of the clicks per search, or of the buyers (revenue per visitor: the same orders,
        # more of them, so winsorising caps both variants alike)
        lifted = (0.14, 0.43 * (1 + mde)) if metric == "clickThroughRate" else (0.14 * (1 + mde), 0.43)
        t = visitors(rng, n, lifted[0], ctr=lifted[1])
        cmp = analyse(exp, {"control": c, "b1": t})["variants"][1]["vsControl"][metric]
        found += cmp["significant"] and cmp["diff"] > 0
    assert 0.7 <= found / runs <= 0.9, (n, found)


def test_the_plan_is_reached_when_every_variant_has_its_visitors() -> None:
    rng = np.random.default_rng(19)
    exp = experiment()
    n = st.sample_size(0.3, 0.05)
    small = analyse(exp, {"control": visitors(rng, n, 0.3), "b1": visitors(rng, n // 2, 0.3)})
    assert small["sampleSize"]["metric"] == "conversionRate" and small["sampleSize"]["reached"] is False
    assert analyse(exp, {})["sampleSize"] is None  # no control figure yet: nothing to plan from
