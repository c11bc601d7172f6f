"""Click grades for the ranker learned from behaviour: position correction and the traffic threshold."""

from __future__ import annotations

import numpy as np

from aisle.search.training.clicks import MIN_CLICKS, MIN_SEARCHES, click_grades, click_pairs, may_deploy


def test_pairs_aggregate_positions_and_weigh_examinations() -> None:
    pairs = click_pairs(
        ["q", "q", "q"], ["a", "a", "b"], np.array([1, 3, 2]), np.array([10, 30, 40]), np.array([5, 3, 4]),
        propensities=[1.0, 0.5, 0.25],
    )  # fmt: skip
    assert pairs.queries == ["q", "q"] and pairs.products == ["a", "b"]
    np.testing.assert_allclose(pairs.impressions, [40, 40])
    np.testing.assert_allclose(pairs.clicks, [8, 4])
    np.testing.assert_allclose(pairs.examinations, [10 * 1.0 + 30 * 0.25, 40 * 0.5])
    np.testing.assert_allclose(pairs.position, [(10 * 1 + 30 * 3) / 40, 2.0])


def test_correction_lifts_a_product_shown_low_above_one_shown_on_top() -> None:
    # 'top' is shown first and clicked 30% of the time; 'low' is shown tenth and clicked 8% of the
    # time: per impression 'top' wins, per examination (position 10 is examined a fifth as often) 'low'
    rows = 200
    positions = np.array([1] * rows + [10] * rows)
    pairs = click_pairs(
        ["q"] * (2 * rows), ["top"] * rows + ["low"] * rows, positions, np.full(2 * rows, 10),
        np.array([3] * rows + [0.8] * rows), propensities=[1.0] + [0.6] * 8 + [0.2],
    )  # fmt: skip
    naive = click_grades(pairs, corrected=False)
    debiased = click_grades(pairs, corrected=True)
    assert naive[0] > naive[1]
    assert debiased[1] > debiased[0]


def test_the_traffic_threshold() -> None:
    assert not may_deploy(MIN_SEARCHES - 1, MIN_CLICKS)
    assert not may_deploy(MIN_SEARCHES, MIN_CLICKS - 1)
    assert may_deploy(MIN_SEARCHES, MIN_CLICKS)
