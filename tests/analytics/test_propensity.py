"""Position bias estimated from a log recovers the bias that made it (data generated here, in the test)."""

from __future__ import annotations

import numpy as np
import pytest

from aisle.analytics.propensity import estimate_propensities


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
