"""Position bias estimated from a log recovers the bias that made it (data generated here, in the test)."""

from __future__ import annotations

import numpy as np
import pytest

from aisle.behaviour.propensity import estimate_propensities


def _log(theta: np.ndarray, pairs: int, positions_per_pair: int, seed: int = 1) -> tuple[np.ndarray, ...]:
    """Aggregated (pair, position, impressions, clicks) of a PBM with examination ``theta``."""
    rng = np.random.default_rng(seed)
    appeal = rng.uniform(0.05, 0.9, pairs)
    rows = []
    for p in range(pairs):
        for k in rng.choice(len(theta), size=positions_per_pair, replace=False):
            n = int(rng.integers(50, 400))
            rows.append((p, k + 1, n, rng.binomial(n, theta[k] * appeal[p])))
    return tuple(np.asarray(col) for col in zip(*rows, strict=True))


def test_recovers_a_known_position_bias() -> None:
    truth = 1.0 / np.arange(1, 11) ** 0.7
    est = estimate_propensities(*_log(truth, pairs=600, positions_per_pair=2))
    assert est is not None and len(est.theta) == 10
    assert est.pairs == 600
    np.testing.assert_allclose(est.theta, truth, atol=0.05)
    # and a steeper bias is told from a flatter one
    steep = estimate_propensities(*_log(1.0 / np.arange(1, 11) ** 1.5, pairs=600, positions_per_pair=2))
    assert steep is not None and steep.theta[4] < est.theta[4] - 0.2


def test_one_ranking_alone_says_nothing() -> None:
    truth = 1.0 / np.arange(1, 11)
    pair, position, n, c = _log(truth, pairs=300, positions_per_pair=1)
    assert estimate_propensities(pair, position, n, c) is None


def test_refuses_inconsistent_counts() -> None:
    with pytest.raises(ValueError, match="more clicks"):
        estimate_propensities(np.array([0]), np.array([1]), np.array([1]), np.array([2]))
    with pytest.raises(ValueError, match="same length"):
        estimate_propensities(np.array([0, 1]), np.array([1]), np.array([1]), np.array([0]))


def test_counts_the_pairs_an_experiments_arms_moved() -> None:
    """Pairs 0-299 shown at one position by arm 0 and another by arm 1; pairs 300-399 moved within arm 0
    only (a ranker change outside the experiment); pairs 400-449 at one position in both arms."""
    truth = 1.0 / np.arange(1, 11)
    rng = np.random.default_rng(4)
    rows = []
    for p in range(450):
        appeal = rng.uniform(0.1, 0.9)
        a, b = rng.choice(10, size=2, replace=False) + 1
        placed = [(a, 0), (b, 1)] if p < 300 else [(a, 0), (b, 0)] if p < 400 else [(a, 0), (a, 1)]
        for k, arm in placed:
            n = int(rng.integers(100, 300))
            rows.append((p, k, n, rng.binomial(n, truth[k - 1] * appeal), arm))
    pair, position, n, c, arm = (np.asarray(col) for col in zip(*rows, strict=True))
    est = estimate_propensities(pair, position, n, c, ranking=arm)
    assert est is not None and (est.pairs, est.across_rankings) == (400, 300)
    np.testing.assert_allclose(est.theta, truth, atol=0.06)
    unnamed = estimate_propensities(pair, position, n, c)
    assert unnamed is not None and unnamed.across_rankings == 0 and unnamed.theta == est.theta
    with pytest.raises(ValueError, match="same length"):
        estimate_propensities(pair, position, n, c, ranking=arm[:-1])
