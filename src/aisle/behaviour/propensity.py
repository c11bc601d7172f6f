"""Position bias estimated from the log itself: examination propensities of a position-based click model.

A shopper clicks the product at position k of an answer when she examines position k and finds the
product attractive; the position-based model (PBM; Craswell et al., WSDM 2008; Chuklin, Markov and de
Rijke, *Click Models for Web Search*, 2015, section 3.3) makes the two independent:
``P(click) = theta[k] * gamma[query, product]``. With every (query, product) shown at one position only,
``theta`` and ``gamma`` cannot be told apart; the log separates them where the same pair was shown at
several positions (another ranker, another catalog version, an experiment's variant): *intervention
harvesting* (Agarwal, Zaitsev, Wang, Li, Najork and Joachims, WSDM 2019). :func:`estimate_propensities`
fits the PBM by expectation-maximisation on those pairs alone (the EM of Chuklin et al., section 4.2),
over aggregated counts, and returns ``theta`` relative to position 1.

What identifies a ranking: the position a pair was shown at, pooled over the whole log, so a pair moved
by any change counts. An A/B experiment whose arms rank differently (a ranker version against none) is
the cleanest source: its arms run at the same time on visitors split at random, so a pair's positions in
the two arms differ by the ranking alone, not by the season. Each row may name its ``ranking`` (the
answers' experiment arms, the log's ``variant``); the estimate then says how many of its pairs were
moved across arms (:attr:`Propensities.across_rankings`).

Nothing here knows how the clicks were made: a learner evaluated on simulated shoppers gets only what
the log holds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_PAIRS = 20
"""Pairs shown at two positions or more below which the propensities are not estimated."""
MIN_IMPRESSIONS = 20
"""Impressions a (pair, position) row needs to take part. Each pair brings its own appeal parameter, so
pairs seen a handful of times bias the maximum-likelihood ``theta`` (the incidental-parameter problem,
Neyman and Scott 1948): on the simulated Home Depot log of 100k searches, keeping every row gave
position 5 a propensity of 0.37 where the shoppers' was 0.20; rows of 20 impressions or more gave 0.23."""


@dataclass(frozen=True)
class Propensities:
    """Examination propensity per position, position 1 = 1.0.

    Attributes:
        theta: ``theta[k - 1]`` for positions 1..len(theta), non-increasing is not forced (the data says).
        pairs: (query, product) pairs seen at two or more positions that the estimate rests on.
        impressions: impressions of those pairs.
        across_rankings: of those pairs, the ones shown at different positions by different rankings
            (the rows' ``ranking`` ids: experiment arms); 0 when the rows name none.
    """

    theta: tuple[float, ...]
    pairs: int
    impressions: int
    across_rankings: int = 0

    def at(self, positions: np.ndarray) -> np.ndarray:
        """Propensities of 1-based ``positions`` (an int array); positions past the estimate get the last
        estimated one (the log says nothing about them)."""
        table = np.asarray(self.theta, dtype=np.float64)
        return table[np.clip(np.asarray(positions, dtype=np.int64), 1, len(table)) - 1]


def estimate_propensities(
    pair: np.ndarray,
    position: np.ndarray,
    impressions: np.ndarray,
    clicks: np.ndarray,
    *,
    max_position: int = 10,
    iterations: int = 2000,
    min_pairs: int = MIN_PAIRS,
    min_impressions: int = MIN_IMPRESSIONS,
    ranking: np.ndarray | None = None,
) -> Propensities | None:
    """Fit the PBM's ``theta`` on aggregated counts by EM.

    Args:
        pair: (n,) int id of each row's (query, product) pair.
        position: (n,) 1-based position it was shown at; rows past ``max_position`` are ignored.
        impressions, clicks: (n,) how often the pair was shown at that position, and clicked there.
        iterations: EM steps (each a few numpy passes over the rows; 2,000 converge to 3 decimals on the
            bench's logs, about 8 s for 100k searches' click table on a busy core).
        min_pairs: fewest pairs seen at two positions or more to estimate from.
        min_impressions: rows with fewer impressions are left out (see :data:`MIN_IMPRESSIONS`).
        ranking: (n,) int id of the ranking that showed each row (an experiment arm), or None.

    Returns:
        The propensities relative to position 1, or None when the log holds fewer than ``min_pairs``
        pairs shown at several positions (a log of one ranking only says nothing about position bias).

    Raises:
        ValueError: arrays of different lengths, or clicks above impressions.
    """
    pair, position = np.asarray(pair, np.int64), np.asarray(position, np.int64)
    n_imp, n_clk = np.asarray(impressions, np.float64), np.asarray(clicks, np.float64)
    arm = np.zeros(len(pair), np.int64) if ranking is None else np.asarray(ranking, np.int64)
    if not (len(pair) == len(position) == len(n_imp) == len(n_clk) == len(arm)):
        raise ValueError("pair, position, impressions, clicks and ranking must have the same length")
    if np.any(n_clk > n_imp):
        raise ValueError("a row has more clicks than impressions")
    keep = (position >= 1) & (position <= max_position) & (n_imp >= max(min_impressions, 1))
    pair, position, n_imp, n_clk, arm = pair[keep], position[keep], n_imp[keep], n_clk[keep], arm[keep]
    if len(pair) == 0:
        return None
    # intervention harvesting: only pairs shown at two positions or more tell examination from appeal
    _, dense = np.unique(pair, return_inverse=True)
    seen = np.zeros((dense.max() + 1, max_position), dtype=bool)
    seen[dense, position - 1] = True
    several = seen.sum(axis=1) >= 2
    rows = several[dense]
    if int(several.sum()) < min_pairs:
        return None
    # a pair at two positions or more and in two rankings or more has two rows differing in both
    _, pair_arm = np.unique(np.stack([dense, arm]), axis=1, return_inverse=True)
    arms = np.bincount(np.unique(np.stack([dense, pair_arm.ravel()]), axis=1)[0], minlength=len(several))
    across = int((several & (arms >= 2)).sum())
    _, dense = np.unique(dense[rows], return_inverse=True)
    k, n, c = position[rows] - 1, n_imp[rows], n_clk[rows]
    theta = np.full(max_position, 0.5)
    gamma = np.full(dense.max() + 1, 0.5)
    exposure_k = np.bincount(k, weights=n, minlength=max_position)
    exposure_p = np.bincount(dense, weights=n)
    for _ in range(iterations):
        t, g = theta[k], gamma[dense]
        unclicked = n - c
        miss = np.maximum(1.0 - t * g, 1e-12)
        examined = c + unclicked * t * (1.0 - g) / miss  # expected examinations
        attracted = c + unclicked * g * (1.0 - t) / miss  # expected attractions
        theta = np.where(
            exposure_k > 0,
            np.bincount(k, weights=examined, minlength=max_position) / np.maximum(exposure_k, 1),
            0,
        )
        gamma = np.bincount(dense, weights=attracted) / exposure_p
        theta = np.clip(theta, 1e-6, 1.0)
        gamma = np.clip(gamma, 1e-6, 1.0 - 1e-6)
    top = theta[0] if exposure_k[0] > 0 else theta[exposure_k > 0].max()
    relative = theta / top
    # positions the harvested pairs never reached carry the nearest estimated one before them
    for j in range(1, max_position):
        if exposure_k[j] == 0:
            relative[j] = relative[j - 1]
    last = int(np.flatnonzero(exposure_k > 0).max()) + 1
    return Propensities(tuple(float(x) for x in relative[:last]), int(several.sum()), int(n.sum()), across)
