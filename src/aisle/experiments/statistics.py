"""The statistics of an experiment's results, with the visitor as the unit of analysis.

Visitors are what is randomised (:mod:`.assignment`), so every figure treats a visitor as one
observation; searches of one visitor are not independent. The formulas (docs/experiments.md has them
with their sources):

- **Conversion rate** (share of visitors with at least one attributed purchase): a proportion; its 95%
  interval is Wilson's; the difference to control has the unpooled Wald interval
  ``d +- z * sqrt(p1 q1 / n1 + p2 q2 / n2)`` and the two-proportion z-test's p-value
  (``statsmodels.stats.proportion.proportions_ztest``, pooled variance).
- **Click-through rate** (searches with a click / searches): a ratio of two per-visitor sums, its
  variance by the delta method (Deng, Knoblich & Lu 2018, "Applying the Delta Method in Metric
  Analytics"): ``Var(X/Y) ~ (s_x^2 - 2 R s_xy + R^2 s_y^2) / (n * mean_y^2)``; the difference to control
  is a z-test on ``R_t - R_c`` with the two variances added.
- **Revenue per visitor**: each visitor's revenue winsorised at the 99th percentile of the positive
  revenues of all variants pooled (one very large order no longer decides a test), then Welch's t-test
  (``scipy.stats.ttest_ind(equal_var=False)``) with the Welch-Satterthwaite interval.
- **Multiple variants**: each metric's p-values of the treatments against control are adjusted by
  Benjamini-Hochberg (``statsmodels.stats.multitest.multipletests(method="fdr_bh")``).
- **Sample ratio mismatch**: Pearson's chi-square of the visitors per variant against the configured
  weights (``scipy.stats.chisquare``); p < 0.001 raises the warning (the results are then suspect).
- **Sample size**: visitors per variant to detect a relative lift ``mde`` of a baseline conversion rate
  with a two-sided test at ``alpha``, ``power`` (Cohen's h, ``NormalIndPower.solve_power``); of a
  per-visitor mean or ratio (click-through, revenue), from its per-visitor standard deviation
  (``sd``: the delta method's for a ratio), with the standardised effect ``delta / sd``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_confint, proportion_effectsize, proportions_ztest

ALPHA = 0.05
SRM_ALPHA = 0.001
WINSOR_QUANTILE = 0.99
MIN_EFFECT = 1e-4
"""Smallest Cohen's h a sample size is estimated for (about 8 * 10^8 visitors per variant)."""


@dataclass(frozen=True)
class VisitorTotals:
    """One variant's visitors, one entry per visitor (equal-length arrays).

    Attributes:
        searches: answers the visitor was shown; clicked: of them, answers with an attributed click;
        converted: attributed purchases (any count); revenue: attributed revenue (currency units).
    """

    searches: np.ndarray
    clicked: np.ndarray
    converted: np.ndarray
    revenue: np.ndarray

    @property
    def visitors(self) -> int:
        return len(self.searches)


@dataclass(frozen=True)
class Estimate:
    """A figure and its 95% interval (``low``, ``high``; None when there is too little data)."""

    value: float | None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Comparison:
    """A treatment against control: the difference (treatment - control) with its 95% interval, the
    relative lift (difference / control), the p-value, and the Benjamini-Hochberg adjusted one."""

    diff: float | None
    low: float | None
    high: float | None
    lift: float | None
    p_value: float | None
    p_adjusted: float | None = None

    @property
    def significant(self) -> bool:
        return self.p_adjusted is not None and self.p_adjusted < ALPHA


def _z(alpha: float = ALPHA) -> float:
    return float(stats.norm.ppf(1 - alpha / 2))


def conversion(v: VisitorTotals) -> Estimate:
    """Share of visitors with a conversion, with Wilson's 95% interval."""
    n = v.visitors
    if n == 0:
        return Estimate(None)
    x = int(np.count_nonzero(v.converted > 0))
    low, high = proportion_confint(x, n, alpha=ALPHA, method="wilson")
    return Estimate(x / n, float(low), float(high))


def compare_conversion(c: VisitorTotals, t: VisitorTotals) -> Comparison:
    """Two-proportion z-test of visitor conversion, treatment ``t`` against control ``c``."""
    n1, n2 = c.visitors, t.visitors
    if n1 == 0 or n2 == 0:
        return Comparison(None, None, None, None, None)
    x1, x2 = int(np.count_nonzero(c.converted > 0)), int(np.count_nonzero(t.converted > 0))
    return proportions_diff(x1, n1, x2, n2)


def proportions_diff(x1: int, n1: int, x2: int, n2: int) -> Comparison:
    """Control ``x1`` of ``n1`` against treatment ``x2`` of ``n2`` (see the module docstring)."""
    p1, p2 = x1 / n1, x2 / n2
    diff = p2 - p1
    se = math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    if x1 + x2 in (0, n1 + n2):  # no variance at all: nothing to test
        return Comparison(diff, diff, diff, _lift(diff, p1), 1.0)
    _, p = proportions_ztest([x2, x1], [n2, n1], alternative="two-sided")
    z = _z()
    return Comparison(diff, diff - z * se, diff + z * se, _lift(diff, p1), float(p))


def _ratio(num: np.ndarray, den: np.ndarray) -> tuple[float | None, float | None]:
    """(sum num / sum den, its delta-method variance), per-visitor sums (module docstring)."""
    n = len(den)
    if n < 2 or den.sum() == 0:
        return None, None
    mx, my = float(num.mean()), float(den.mean())
    r = mx / my
    cov = np.cov(num.astype(np.float64), den.astype(np.float64), ddof=1)
    var = (cov[0, 0] - 2 * r * cov[0, 1] + r * r * cov[1, 1]) / (n * my * my)
    return r, max(float(var), 0.0)


def click_through(v: VisitorTotals) -> Estimate:
    """Searches with a click / searches, with the delta method's 95% interval."""
    r, var = _ratio(v.clicked, v.searches)
    if r is None or var is None:
        return Estimate(None if v.searches.sum() == 0 else float(v.clicked.sum() / v.searches.sum()))
    half = _z() * math.sqrt(var)
    return Estimate(r, r - half, r + half)


def compare_click_through(c: VisitorTotals, t: VisitorTotals) -> Comparison:
    """z-test of the difference of two click-through rates, delta-method variances."""
    rc, vc = _ratio(c.clicked, c.searches)
    rt, vt = _ratio(t.clicked, t.searches)
    if rc is None or rt is None or vc is None or vt is None:
        return Comparison(None, None, None, None, None)
    diff, se = rt - rc, math.sqrt(vc + vt)
    if se == 0:
        return Comparison(diff, diff, diff, _lift(diff, rc), 1.0)
    p = float(2 * stats.norm.sf(abs(diff) / se))
    half = _z() * se
    return Comparison(diff, diff - half, diff + half, _lift(diff, rc), p)


def winsor_cap(revenues: list[np.ndarray], quantile: float = WINSOR_QUANTILE) -> float | None:
    """The cap: the ``quantile`` of the positive revenues of every variant pooled (None: no revenue)."""
    positive = np.concatenate([r[r > 0] for r in revenues]) if revenues else np.empty(0)
    return float(np.quantile(positive, quantile)) if len(positive) else None


def winsorise(revenue: np.ndarray, cap: float | None) -> np.ndarray:
    """``revenue`` with every value above ``cap`` set to it."""
    return revenue if cap is None else np.minimum(revenue, cap)


def mean_estimate(values: np.ndarray) -> Estimate:
    """The mean with its 95% t interval."""
    n = len(values)
    if n == 0:
        return Estimate(None)
    mean = float(values.mean())
    if n < 2:
        return Estimate(mean)
    half = float(stats.t.ppf(1 - ALPHA / 2, n - 1)) * float(values.std(ddof=1)) / math.sqrt(n)
    return Estimate(mean, mean - half, mean + half)


def welch(c: np.ndarray, t: np.ndarray) -> Comparison:
    """Welch's t-test of ``mean(t) - mean(c)`` with its Welch-Satterthwaite 95% interval."""
    if len(c) < 2 or len(t) < 2:
        return Comparison(None, None, None, None, None)
    diff, base = float(t.mean() - c.mean()), float(c.mean())
    if float(c.var()) == 0.0 and float(t.var()) == 0.0:
        return Comparison(diff, diff, diff, _lift(diff, base), 1.0 if diff == 0 else 0.0)
    res = stats.ttest_ind(t, c, equal_var=False)
    ci = res.confidence_interval(1 - ALPHA)
    return Comparison(diff, float(ci.low), float(ci.high), _lift(diff, base), float(res.pvalue))


def benjamini_hochberg(comparisons: list[Comparison]) -> list[Comparison]:
    """The comparisons with ``p_adjusted`` set by Benjamini-Hochberg over those that have a p-value."""
    tested = [i for i, c in enumerate(comparisons) if c.p_value is not None]
    out = list(comparisons)
    if tested:
        _, adjusted, _, _ = multipletests([comparisons[i].p_value for i in tested], method="fdr_bh")
        for i, p in zip(tested, adjusted, strict=True):
            c = comparisons[i]
            out[i] = Comparison(c.diff, c.low, c.high, c.lift, c.p_value, float(p))
    return out


@dataclass(frozen=True)
class SampleRatio:
    """The sample-ratio-mismatch check: chi-square statistic, p-value, and whether to warn."""

    chi2: float | None
    p_value: float | None
    mismatch: bool


def sample_ratio(visitors: list[int], weights: list[float], alpha: float = SRM_ALPHA) -> SampleRatio:
    """Pearson's chi-square of the visitors per variant against the expected shares ``weights``."""
    total = sum(visitors)
    if total == 0:
        return SampleRatio(None, None, False)
    expected = [total * w / sum(weights) for w in weights]
    chi2, p = stats.chisquare(visitors, expected)
    return SampleRatio(float(chi2), float(p), bool(p < alpha))


def sample_size(baseline: float, mde: float, *, alpha: float = ALPHA, power: float = 0.8) -> int:
    """Visitors per variant needed to detect a relative lift ``mde`` of the ``baseline`` conversion
    rate (two-sided test at ``alpha`` with ``power``; Cohen's h effect size).

    Raises:
        ValueError: baseline not in (0, 1), the lifted rate ``baseline * (1 + mde)`` not below 1, or an
            effect so small (Cohen's h below :data:`MIN_EFFECT`) that no test could detect it.
    """
    if not 0 < baseline < 1:
        raise ValueError("the baseline conversion rate must lie strictly between 0 and 1")
    lifted = baseline * (1 + mde)
    if not 0 < lifted < 1 or mde == 0:
        raise ValueError("the lifted conversion rate baseline * (1 + mde) must lie strictly between 0 and 1")
    h = abs(float(proportion_effectsize(lifted, baseline)))
    if h < MIN_EFFECT:  # no test can see it: statsmodels would return a meaningless or infinite size
        raise ValueError(f"the effect is too small to detect (Cohen's h {h:.2g} below {MIN_EFFECT})")
    n = NormalIndPower().solve_power(effect_size=h, alpha=alpha, power=power, ratio=1.0)
    return math.ceil(float(n))


def sample_size_of_mean(sd: float, delta: float, *, alpha: float = ALPHA, power: float = 0.8) -> int:
    """Visitors per variant needed to detect a difference ``delta`` of a per-visitor figure whose
    per-visitor standard deviation is ``sd`` (two-sided z-test at ``alpha`` with ``power``):
    ``n = 2 (z_{1-alpha/2} + z_power)^2 sd^2 / delta^2``. For a ratio such as click-through, ``sd`` is
    the delta method's: ``sqrt(n * Var(R))`` of a sample of ``n`` visitors (:func:`ratio_sd`).

    Raises:
        ValueError: ``sd`` not positive, or an effect ``|delta| / sd`` below :data:`MIN_EFFECT`.
    """
    if not sd > 0:
        raise ValueError("the figure does not vary between visitors: no sample size to estimate")
    effect = abs(delta) / sd
    if effect < MIN_EFFECT:
        raise ValueError(f"the effect is too small to detect (standardised {effect:.2g} below {MIN_EFFECT})")
    n = NormalIndPower().solve_power(effect_size=effect, alpha=alpha, power=power, ratio=1.0)
    return math.ceil(float(n))


def ratio_sd(num: np.ndarray, den: np.ndarray) -> tuple[float | None, float | None]:
    """(``sum num / sum den``, its per-visitor standard deviation by the delta method), None when
    there are fewer than two visitors or no denominator."""
    r, var = _ratio(num, den)
    if r is None or var is None:
        return None, None
    return r, math.sqrt(var * len(den))


def _lift(diff: float, base: float) -> float | None:
    return diff / base if base else None
