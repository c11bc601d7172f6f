"""Click grades for the ranker learned from behaviour: position correction, the traffic threshold, and the
depth it reorders within when served."""

from __future__ import annotations

import numpy as np

from aisle.search.ranking.store import depth_order
from aisle.search.training.clicks import (
    MIN_CLICKS,
    MIN_SEARCHES,
    click_grades,
    click_pairs,
    may_deploy,
    shown_depth,
)


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


def test_the_shown_depth_is_the_last_position_with_a_real_share_of_impressions() -> None:
    positions = np.array([1, 2, 3, 10, 11, 40])
    impressions = np.array([1000, 900, 800, 120, 15, 3])  # page 2 (11) is real, a deep page 4 (40) is not
    assert shown_depth(positions, impressions) == 11
    assert shown_depth(np.array([1, 2]), np.array([5, 5])) == 2
    assert shown_depth(np.zeros(0, dtype=int), np.zeros(0)) is None


def test_a_depth_reorders_only_the_first_served_candidates() -> None:
    features = np.arange(6, dtype=np.float32)[:, None]  # score = the row number: higher row first
    served = np.array([5, 0, 3, 1, 4, 2])  # the pipeline's order without a ranker
    seen: list[int] = []

    def score(x: np.ndarray) -> np.ndarray:
        seen.append(len(x))
        return x[:, 0].astype(np.float64)

    order, scores = depth_order(score, features, served, 3)
    assert order.tolist() == [5, 3, 0, 1, 4, 2]  # rows 5, 0, 3 reordered; 1, 4, 2 as served
    assert seen == [3]  # only the reordered rows are scored
    assert np.all(np.diff(scores[order]) < 0)  # scores fall along the order
    full, _ = depth_order(score, features, served, None)
    assert full.tolist() == [5, 4, 3, 2, 1, 0]
    assert depth_order(score, features, None, 10)[0].tolist() == [5, 4, 3, 2, 1, 0]  # deeper than n: all
    assert depth_order(score, features, None, 2)[0].tolist() == [1, 0, 2, 3, 4, 5]  # no served: row order
