"""An experiment's results: per variant figures, each treatment against control, SRM and the winner.

:func:`analyse` takes each variant's per-visitor totals (the analytics log read by the analytics
engine, or a simulation) and returns plain JSON-ready dictionaries (camelCase), the results endpoint's
body. Formulas: :mod:`aisle.experiments.statistics`.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

import numpy as np

from aisle.experiments import statistics as st
from aisle.experiments.model import Experiment

METRICS = ("conversionRate", "clickThroughRate", "revenuePerVisitor")


def _estimate(e: st.Estimate) -> dict[str, float | None]:
    return asdict(e)


def _comparison(c: st.Comparison) -> dict[str, Any]:
    return {
        "diff": c.diff,
        "low": c.low,
        "high": c.high,
        "lift": c.lift,
        "pValue": c.p_value,
        "pAdjusted": c.p_adjusted,
        "significant": c.significant,
    }


def empty_totals() -> st.VisitorTotals:
    zero = np.zeros(0)
    return st.VisitorTotals(zero, zero, zero, zero)


def analyse(experiment: Experiment, totals: dict[str, st.VisitorTotals]) -> dict[str, Any]:
    """The results body of ``experiment`` from each variant's per-visitor ``totals`` (a variant
    missing from it had no visitors).

    Returns ``{"variants": [...], "sampleRatio": {...}, "winner": id or None, "primaryMetric",
    "sampleSize"}``; each variant has ``visitors``, ``searches``, the three metrics as
    ``{value, low, high}`` and, for treatments, ``vsControl``: per metric ``{diff, low, high, lift,
    pValue, pAdjusted, significant}``; ``sampleSize`` is :func:`planned_sample`.
    """
    arms = [totals.get(v.id, empty_totals()) for v in experiment.variants]
    cap = st.winsor_cap([a.revenue for a in arms])
    revenue = [st.winsorise(a.revenue.astype(np.float64), cap) for a in arms]
    control = arms[0]
    compared: dict[str, list[st.Comparison]] = {
        "conversionRate": [st.compare_conversion(control, a) for a in arms[1:]],
        "clickThroughRate": [st.compare_click_through(control, a) for a in arms[1:]],
        "revenuePerVisitor": [st.welch(revenue[0], r) for r in revenue[1:]],
    }
    compared = {m: st.benjamini_hochberg(cs) for m, cs in compared.items()}
    variants = []
    for i, (variant, arm) in enumerate(zip(experiment.variants, arms, strict=True)):
        row: dict[str, Any] = {
            "id": variant.id,
            "name": variant.name or variant.id,
            "control": i == 0,
            "weight": experiment.weights()[i],
            "visitors": arm.visitors,
            "searches": int(arm.searches.sum()),
            "conversionRate": _estimate(st.conversion(arm)),
            "clickThroughRate": _estimate(st.click_through(arm)),
            "revenuePerVisitor": _estimate(st.mean_estimate(revenue[i])),
        }
        if i > 0:
            row["vsControl"] = {m: _comparison(compared[m][i - 1]) for m in METRICS}
        variants.append(row)
    srm = st.sample_ratio([a.visitors for a in arms], experiment.weights())
    return {
        "primaryMetric": experiment.primaryMetric,
        "variants": variants,
        "sampleRatio": {"chi2": srm.chi2, "pValue": srm.p_value, "mismatch": srm.mismatch},
        "winsorCap": cap,
        "winner": winner(experiment, compared[experiment.primaryMetric]),
        "sampleSize": planned_sample(experiment, arms, revenue),
    }


def planned_sample(
    experiment: Experiment, arms: list[st.VisitorTotals], revenue: list[np.ndarray]
) -> dict[str, Any] | None:
    """The visitors per variant the test needs on its **primary metric** to detect its relative
    ``minimumDetectableEffect`` at the control's observed figure (alpha 0.05, power 0.8), and whether
    every variant has them.

    Conversion uses Cohen's h (:func:`~.statistics.sample_size`); click-through and revenue per visitor
    the control's per-visitor standard deviation (:func:`~.statistics.sample_size_of_mean`; revenue
    winsorised as in the results). Returns ``{metric, baseline, minimumDetectableEffect,
    visitorsPerVariant, visitorsTotal, reached}`` (``visitorsTotal`` divides by the smallest weight's
    share; ``reached``: each variant has ``visitorsPerVariant``), or None while the control's figure
    is unknown, 0 or does not vary.
    """
    metric, mde, control = experiment.primaryMetric, experiment.minimumDetectableEffect, arms[0]
    try:
        if metric == "conversionRate":
            baseline = st.conversion(control).value
            per_variant = None if baseline is None else st.sample_size(baseline, mde)
        elif metric == "clickThroughRate":
            baseline, sd = st.ratio_sd(control.clicked, control.searches)
            per_variant = (
                None if baseline is None or sd is None else st.sample_size_of_mean(sd, mde * baseline)
            )
        else:
            baseline = st.mean_estimate(revenue[0]).value
            sd = float(revenue[0].std(ddof=1)) if len(revenue[0]) > 1 else 0.0
            per_variant = None if baseline is None else st.sample_size_of_mean(sd, mde * baseline)
    except ValueError:  # a control figure of 0 (or 1), no variance, or no detectable effect
        return None
    if per_variant is None or baseline is None:
        return None
    return {
        "metric": metric,
        "baseline": baseline,
        "minimumDetectableEffect": mde,
        "visitorsPerVariant": per_variant,
        "visitorsTotal": math.ceil(per_variant / min(experiment.weights())),
        "reached": all(a.visitors >= per_variant for a in arms),
    }


def winner(experiment: Experiment, primary: list[st.Comparison]) -> str | None:
    """The variant that won on the primary metric: the treatment with the largest significant gain,
    the control when every treatment is significantly worse, else None (no decision yet)."""
    gains = [
        (c.diff, v.id)
        for c, v in zip(primary, experiment.variants[1:], strict=True)
        if c.significant and c.diff is not None and c.diff > 0
    ]
    if gains:
        return max(gains)[1]
    if primary and all(c.significant and c.diff is not None and c.diff < 0 for c in primary):
        return experiment.control.id
    return None
