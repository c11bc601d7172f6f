"""Popularity and trending of a tenant's products, computed from its shopper events.

Input: canonical events (:mod:`aisle.recs.events`: ``item_id, event_type, ts``; other columns are
ignored). ``now`` is the newest event unless given; only events with ``now - W days < ts <= now`` count
in the window of ``W`` days (:attr:`PopularityParams.windows`, default 7, 30 and 90).

Per product and window:

- ``views, carts, purchases``: the events of each kind (``click`` counts as a view; ``cart`` and
  ``add-to-cart`` as ``add_to_cart``);
- ``weighted = sum(weight(event type))`` with :data:`EVENT_WEIGHTS` (view 1, cart 3, purchase 5; other
  event types 0). A purchase says more about what shoppers want than a view, and is much rarer
  (REES46: 17,056 views, 165 carts, 214 purchases), so it weighs more; the weights stay small so a few
  purchases do not drown a product's views. They are the usual graded implicit-feedback confidences
  (Hu, Koren and Volinsky, ICDM 2008, weigh stronger actions more) chosen by hand, not learned;
  ``bench/bench_recs_popularity.py`` compares them with views alone on REES46;
- ``share = (weighted + 1) / (total + n)``: the product's share of the window's weighted events with
  add-one (Laplace) smoothing, ``total`` the window's weighted events, ``n`` the products in the table.

Per product (the ``items`` table):

- ``popularity``: its ``share`` in the :attr:`~PopularityParams.popularity_days` window (default 30);
- ``trending``: its share in the short window over its share in the long one
  (:attr:`~PopularityParams.trending_days`, default 7 over 90), the short share shrunk towards the
  long one (a Bayesian average: a Beta prior centred on the long share worth ``prior`` pseudo-events,
  default 10)::

      p_long   = (w_long + 1) / (T_long + n)
      trending = ((w_short + prior * p_long) / (T_short + prior)) / p_long

  Above 1: rising; 1 when nothing happened in the short window; a product seen twice lately is not
  "trending" on those two events alone. Same smoothing as the search-side product table's
  ``trending`` (:mod:`aisle.behaviour.tables`), with a prior instead of add-one in the short window.

:mod:`aisle.recs.popularity_store` publishes the tables as a versioned artifact; the predict engine
orders backfill with them (:mod:`aisle.recs.serving.popularity`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from aisle.core.events import CART_NAMES, EventName

DAY_S = 86400.0
EVENT_WEIGHTS: dict[str, float] = {
    EventName.VIEW.value: 1.0,
    EventName.CLICK.value: 1.0,
    **dict.fromkeys(CART_NAMES, 3.0),
    EventName.PURCHASE.value: 5.0,
}
"""Weight of one event of each type in ``weighted`` (see the module docstring); other types weigh 0."""
VIEW_TYPES: tuple[str, ...] = (EventName.VIEW.value, EventName.CLICK.value)


@dataclass(frozen=True)
class PopularityParams:
    """How the tables are computed.

    Attributes:
        windows: window lengths in days (fractions allowed), each ending at ``now``.
        popularity_days: the window whose share is ``popularity`` (one of ``windows``).
        trending_days: ``(short, long)`` windows of ``trending`` (both in ``windows``).
        weights: event type -> weight in ``weighted``.
        prior: pseudo-events of the prior that shrinks the short-window share (>= 0).
    """

    windows: tuple[float, ...] = (7.0, 30.0, 90.0)
    popularity_days: float = 30.0
    trending_days: tuple[float, float] = (7.0, 90.0)
    weights: dict[str, float] = field(default_factory=lambda: dict(EVENT_WEIGHTS))
    prior: float = 10.0

    def check(self) -> None:
        """Raises ValueError when a named window is not among ``windows`` or a value is out of range."""
        if not self.windows or any(w <= 0 for w in self.windows):
            raise ValueError(f"windows must be positive days, got {self.windows}")
        short, long_ = self.trending_days
        for name, days in (("popularity_days", self.popularity_days), ("short", short), ("long", long_)):
            if days not in self.windows:
                raise ValueError(f"{name} {days} is not one of the windows {self.windows}")
        if self.trending_days[0] > self.trending_days[1]:
            raise ValueError(f"trending_days must be (short, long), got {self.trending_days}")
        if self.prior < 0:
            raise ValueError(f"prior must be >= 0, got {self.prior}")


@dataclass(frozen=True)
class PopularityTables:
    """The computed tables.

    Attributes:
        items: ``item_id, popularity, trending, weighted`` (``weighted`` in the popularity window),
            one row per product with an event in the longest window, most popular first.
        windows: ``item_id, window_days, views, carts, purchases, weighted, share``, one row per
            (product, window).
        now: end of every window, Unix seconds.
        events: events in the longest window.
    """

    items: pl.DataFrame
    windows: pl.DataFrame
    now: float
    events: int


def compute_popularity(
    events: pl.DataFrame, now: float | None = None, params: PopularityParams | None = None
) -> PopularityTables:
    """The popularity tables of ``events`` (see the module docstring for every formula).

    Raises:
        ValueError: bad ``params``; ``events`` lacks ``item_id``, ``event_type`` or ``ts``.
    """
    params = params or PopularityParams()
    params.check()
    missing = {"item_id", "event_type", "ts"} - set(events.columns)
    if missing:
        raise ValueError(f"events lack columns {sorted(missing)}")
    if now is None:
        now = float(events["ts"].max()) if events.height else 0.0  # type: ignore[arg-type]
    longest = max(params.windows)
    weights = pl.DataFrame(
        {"event_type": list(params.weights), "weight": [float(w) for w in params.weights.values()]}
    )
    recent = (
        events.select(pl.col("item_id").cast(pl.Utf8), pl.col("event_type").cast(pl.Utf8), pl.col("ts"))
        .filter(pl.col("ts") <= now, pl.col("ts") > now - longest * DAY_S, pl.col("item_id").is_not_null())
        .join(weights, on="event_type", how="left")
        .with_columns(pl.col("weight").fill_null(0.0))
    )
    parts = []
    for days in sorted(set(params.windows)):
        parts.append(
            recent.filter(pl.col("ts") > now - days * DAY_S)
            .group_by("item_id")
            .agg(
                views=pl.col("event_type").is_in(VIEW_TYPES).sum().cast(pl.Int64),
                carts=pl.col("event_type").is_in(CART_NAMES).sum().cast(pl.Int64),
                purchases=(pl.col("event_type") == "purchase").sum().cast(pl.Int64),
                weighted=pl.col("weight").sum(),
            )
            .with_columns(window_days=pl.lit(float(days)))
        )
    items = recent.filter(pl.col("weight") > 0).select("item_id").unique()
    n = float(max(items.height, 1))
    grid = items.join(pl.DataFrame({"window_days": sorted(set(map(float, params.windows)))}), how="cross")
    zero = {"views": 0, "carts": 0, "purchases": 0, "weighted": 0.0}
    windows = (
        grid.join(pl.concat(parts) if parts else pl.DataFrame(), on=["item_id", "window_days"], how="left")
        .with_columns([pl.col(c).fill_null(v) for c, v in zero.items()])
        .with_columns(share=(pl.col("weighted") + 1.0) / (pl.col("weighted").sum().over("window_days") + n))
        .select("item_id", "window_days", "views", "carts", "purchases", "weighted", "share")
        .sort(["window_days", "item_id"])
    )

    def window(days: float, *cols: str) -> pl.DataFrame:
        return windows.filter(pl.col("window_days") == float(days)).select("item_id", *cols)

    short, long_ = params.trending_days
    totals = windows.group_by("window_days").agg(total=pl.col("weighted").sum())
    t_short = float(totals.filter(pl.col("window_days") == float(short))["total"].sum())
    a = params.prior
    out = (
        window(params.popularity_days, "share", "weighted")
        .rename({"share": "popularity"})
        .join(window(long_, "share").rename({"share": "p_long"}), on="item_id")
        .join(window(short, "weighted").rename({"weighted": "w_short"}), on="item_id")
        .with_columns(
            trending=((pl.col("w_short") + a * pl.col("p_long")) / (t_short + a)) / pl.col("p_long")
            if t_short + a > 0
            else pl.lit(1.0)
        )
        .select("item_id", "popularity", "trending", "weighted")
        .sort(["popularity", "item_id"], descending=[True, False])
    )
    return PopularityTables(out, windows, float(now), recent.height)
