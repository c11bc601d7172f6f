"""An experiment's results: per variant figures, each treatment against control, SRM and the winner.

:func:`analyse` takes each variant's per-visitor totals (the analytics log read by the analytics
engine, or a simulation) and returns plain JSON-ready dictionaries (camelCase), the results endpoint's
body. Formulas: :mod:`aisle.experiments.statistics`.
"""

from __future__ import annotations

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

    Returns ``{"variants": [...], "sampleRatio": {...}, "winner": id or None, "primaryMetric"}``;
    each variant has ``visitors``, ``searches``, the three metrics as ``{value, low, high}`` and, for
    treatments, ``vsControl``: per metric ``{diff, low, high, lift, pValue, pAdjusted, significant}``.
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
