"""Assignment: stable, split as configured (within the SRM check's tolerance), independent per salt."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
from scipy import stats

from aisle.experiments.assignment import assign, assign_many, unit_hash
from aisle.experiments.model import Experiment, Variant
from aisle.experiments.statistics import sample_ratio

IDS = [f"visitor-{i}" for i in range(100_000)]


def experiment(salt: str, weights: tuple[float, ...] = (1, 1)) -> Experiment:
    now = datetime.now(UTC)
    variants = [Variant(id=f"v{i}", weight=w) for i, w in enumerate(weights)]
    return Experiment(
        name="t", variants=variants, id="e1", version=1, salt=salt, createdAt=now, updatedAt=now
    )


def test_100k_visitors_split_50_50_within_the_srm_tolerance_and_stay_put() -> None:
    arms = assign_many("salt-a", [0.5, 0.5], IDS)
    counts = np.bincount(arms, minlength=2).tolist()
    srm = sample_ratio(counts, [1, 1])
    assert not srm.mismatch, counts
    assert abs(counts[0] - 50_000) < 1_000
    again = assign_many("salt-a", [0.5, 0.5], IDS)  # a second process computes the same thing
    assert (arms == again).all()
    exp = experiment("salt-a")
    assert [assign(exp, v).id for v in IDS[:500]] == [f"v{a}" for a in arms[:500]]


def test_unequal_weights_and_five_variants_get_their_shares() -> None:
    arms = assign_many("salt-w", [0.1, 0.2, 0.3, 0.2, 0.2], IDS)
    counts = np.bincount(arms, minlength=5).tolist()
    assert not sample_ratio(counts, [1, 2, 3, 2, 2]).mismatch, counts


def test_two_experiments_on_one_tenant_split_independently() -> None:
    a = assign_many("salt-a", [0.5, 0.5], IDS)
    b = assign_many("salt-b", [0.5, 0.5], IDS)
    table = np.zeros((2, 2))
    np.add.at(table, (a, b), 1)
    _, p, _, _ = stats.chi2_contingency(table)
    assert p > 0.001, table
    assert (a != b).sum() > 40_000  # not the same split


def test_no_visitor_gets_the_control_and_the_hash_is_uniform_in_unit_interval() -> None:
    exp = experiment("s", (1, 1, 1))
    assert assign(exp, None).id == "v0"
    assert assign(exp, "").id == "v0"
    u = np.array([unit_hash("s", v) for v in IDS[:20_000]])
    assert ((u >= 0) & (u < 1)).all()
    assert stats.kstest(u, "uniform").pvalue > 0.001
