"""Which variant a visitor sees: a stable hash of the visitor id and the experiment's salt.

``u = blake2b(salt + "\\x00" + visitorId, 8 bytes) / 2**64`` is a uniform number in [0, 1) that depends
only on the two strings, so a visitor keeps their variant across requests, processes and replicas (no
state to share), and experiments with different salts split visitors independently of each other.
The variant is the first whose cumulative traffic share exceeds ``u``. Requests without a visitor id
get the control (the first variant) and are not counted in the experiment.

A served variant is tagged ``<experimentId>:<variantId>``; an answer in several experiments carries
the tags joined by ``,`` (the analytics log's ``variant`` column, queryGraph ``experiments``).
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from itertools import accumulate

import numpy as np

from aisle.experiments.model import Experiment, Variant

SCALE = float(2**64)


def unit_hash(salt: str, visitor_id: str) -> float:
    """The visitor's uniform number in [0, 1) for an experiment of ``salt`` (see module docstring)."""
    digest = hashlib.blake2b(f"{salt}\x00{visitor_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / SCALE


def variant_index(weights: list[float], u: float) -> int:
    """The index of the variant whose share of [0, 1) holds ``u`` (``weights`` sum to 1)."""
    bounds = list(accumulate(weights))
    return min(bisect_right(bounds, u), len(weights) - 1)


def assign(experiment: Experiment, visitor_id: str | None) -> Variant:
    """The variant ``visitor_id`` sees in ``experiment``; the control without a visitor id."""
    if not visitor_id:
        return experiment.control
    return experiment.variants[variant_index(experiment.weights(), unit_hash(experiment.salt, visitor_id))]


def assign_many(salt: str, weights: list[float], visitor_ids: list[str]) -> np.ndarray:
    """Variant indexes of many visitors at once (tests, simulations): same result as :func:`assign`."""
    u = np.fromiter((unit_hash(salt, v) for v in visitor_ids), dtype=np.float64, count=len(visitor_ids))
    bounds = np.cumsum(weights)
    return np.minimum(np.searchsorted(bounds, u, side="right"), len(weights) - 1)


def tag(experiment_id: str, variant_id: str) -> str:
    """The variant's tag in answers and the log: ``<experimentId>:<variantId>``."""
    return f"{experiment_id}:{variant_id}"


def join_tags(tags: list[str]) -> str:
    """Several tags as the log's one ``variant`` string ("" for none)."""
    return ",".join(tags)
