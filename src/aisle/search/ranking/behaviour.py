"""Behaviour features for the learned ranker: what shoppers did with a (query, product) pair before.

The behaviour engine publishes a tenant's behaviour tables in its scope (``analytics/behaviour/v<N>/``,
pointer ``analytics/behaviour/current.json`` written last; both sides name the paths through
:mod:`aisle.core.analytics_layout`, see ``aisle.behaviour.store``). A
ranker whose feature names include :data:`BEHAVIOUR_FEATURES` gets, after the text features, per
candidate:

- ``qp_ctr``: the pair's smoothed, position-corrected click rate over the 90-day window (a pair never
  shown: the window's mean, what the smoothing gives with no impressions);
- ``product_ctr``: the product's smoothed click rate over all queries in 90 days (never shown: the mean).

How much a rate is worth is in its smoothing (a pair seen a few times sits near the mean), not in a
count of impressions: a click ranker trains on the products that were shown, so a count of 0 is a value
it never saw, and trees extrapolated it as "seen once and clicked" (NDCG@10 -0.22 on the simulated 10k
searches of ``bench/bench_click_learning.py``).

Looked up by the normalised query (as the log records it) and the product id: a dict lookup per
candidate (about 100 per search, tens of microseconds).
"""

from __future__ import annotations

import io
import threading
import time

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from aisle.core import analytics_layout as layout
from aisle.core.storage import BlobNotFound, BlobStore
from aisle.core.tenancy import tenant_scope

BEHAVIOUR_FEATURES: tuple[str, ...] = ("qp_ctr", "product_ctr")
WINDOW_DAYS = 90


def _ratio(num: pa.ChunkedArray, den: pa.ChunkedArray) -> float:
    """``sum(num) / sum(den)`` (NaN when the denominator is 0)."""
    total = float(pc.sum(den).as_py() or 0.0)
    return float(pc.sum(num).as_py() or 0.0) / total if total > 0 else float("nan")


class BehaviourLookup:
    """One version of a tenant's behaviour tables, indexed for serving."""

    def __init__(
        self,
        version: int,
        pairs: dict[str, dict[str, float]],
        products: dict[str, float],
        prior: tuple[float, float] = (float("nan"), float("nan")),
    ) -> None:
        self.version = version
        self.pairs = pairs
        self.products = products
        self.prior = prior
        """``qp_ctr`` and ``product_ctr`` of a pair and a product never shown: the window's mean click
        rates, what the smoothing gives with no impressions (so a never-shown candidate sits where the
        trees put an average one, not wherever LightGBM sends a value it never saw missing)."""

    @classmethod
    def from_parquet(cls, version: int, query_product: bytes, product: bytes) -> BehaviourLookup:
        """From the ``query_product`` and ``product`` tables' files (rows of the 90-day window)."""
        qp = pq.read_table(
            io.BytesIO(query_product),
            columns=["query", "product_id", "window_days", "ctr_corrected"],
        )
        qp = qp.filter(pc.equal(qp["window_days"], WINDOW_DAYS))
        pairs: dict[str, dict[str, float]] = {}
        for q, p, ctr in zip(
            qp["query"].to_pylist(),
            qp["product_id"].to_pylist(),
            qp["ctr_corrected"].to_pylist(),
            strict=True,
        ):
            pairs.setdefault(q, {})[p] = float(ctr)
        pt = pq.read_table(io.BytesIO(product), columns=["product_id", "window_days", "ctr"])
        pt = pt.filter(pc.equal(pt["window_days"], WINDOW_DAYS))
        products = dict(
            zip(pt["product_id"].to_pylist(), (float(x) for x in pt["ctr"].to_pylist()), strict=True)
        )
        qp_all = pq.read_table(io.BytesIO(query_product), columns=["window_days", "clicks", "examinations"])
        qp_all = qp_all.filter(pc.equal(qp_all["window_days"], WINDOW_DAYS))
        pair_prior = _ratio(qp_all["clicks"], qp_all["examinations"])
        pt_all = pq.read_table(io.BytesIO(product), columns=["window_days", "clicks", "impressions"])
        pt_all = pt_all.filter(pc.equal(pt_all["window_days"], WINDOW_DAYS))
        return cls(version, pairs, products, (pair_prior, _ratio(pt_all["clicks"], pt_all["impressions"])))

    def columns(self, query: str, product_ids: list[str]) -> np.ndarray:
        """The :data:`BEHAVIOUR_FEATURES` of ``product_ids`` for ``query``: (n, 2) float32."""
        out = np.empty((len(product_ids), len(BEHAVIOUR_FEATURES)), dtype=np.float32)
        out[:, 0], out[:, 1] = self.prior
        seen = self.pairs.get(query, {})
        products = self.products
        for i, pid in enumerate(product_ids):
            pair = seen.get(pid)
            if pair is not None:
                out[i, 0] = pair
            ctr = products.get(pid)
            if ctr is not None:
                out[i, 1] = ctr
        return out


class BehaviourTables:
    """The tenants' current behaviour lookups: the pointer re-read at most every ``check_every`` seconds,
    each version loaded once."""

    def __init__(self, store: BlobStore, check_every: float = 60.0) -> None:
        self.store = store
        self.check_every = check_every
        self._lock = threading.Lock()
        self._current: dict[str, tuple[float, BehaviourLookup | None]] = {}

    def current(self, tenant: str) -> BehaviourLookup | None:
        """The tenant's lookup, or None before its first behaviour refresh."""
        now = time.monotonic()
        cached = self._current.get(tenant)
        if cached is not None and now - cached[0] < self.check_every:
            return cached[1]
        scope = tenant_scope(self.store, tenant)
        try:
            version = int(orjson.loads(scope.get(layout.BEHAVIOUR_POINTER))["version"])
            lookup = cached[1] if cached is not None and cached[1] is not None else None
            if lookup is None or lookup.version != version:
                lookup = BehaviourLookup.from_parquet(
                    version,
                    scope.get(layout.behaviour_file(version, "query_product.parquet")),
                    scope.get(layout.behaviour_file(version, "product.parquet")),
                )
        except BlobNotFound:
            lookup = None
        with self._lock:
            self._current[tenant] = (now, lookup)
        return lookup


def with_behaviour(
    x: np.ndarray, lookup: BehaviourLookup | None, query: str, product_ids: list[str]
) -> np.ndarray:
    """``x`` (n, F) with the :data:`BEHAVIOUR_FEATURES` columns appended (a tenant without behaviour yet:
    every pair never shown)."""
    if lookup is None:
        extra = np.full((len(product_ids), len(BEHAVIOUR_FEATURES)), np.nan, dtype=np.float32)
    else:
        extra = lookup.columns(query, product_ids)
    return np.hstack([x, extra])
