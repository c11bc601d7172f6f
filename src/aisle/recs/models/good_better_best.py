"""GOOD_BETTER_BEST: three price-tiered options in the seed's leaf category.

A category's prices are split at their 1/3 and 2/3 quantiles (on log price) into ``good``, ``better``
and ``best``. A category gives honest tiers only when it holds ``min_per_tier`` products per tier and the
tier medians are at least ``min_gap`` apart (ratio); otherwise it offers fewer tiers (two, when the
lowest and highest tiers are apart; none otherwise). In each tier the pick is the best seller when sales
are known, else the best match to the seed (same gender, usage, brand, colour), ties broken by closeness
to the tier's median price. The seed's own tier is filled by its closest peer (the seed itself is never
returned, per the serving contract).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import polars as pl

from aisle.recs.models.base import ModelType, RecContext, Scored

LABELS = ("good", "better", "best")
LEAF_COLUMNS = ("article_type", "product_type", "product_category", "category")
MATCH_COLUMNS = {"gender": 2.0, "usage": 1.0, "brand": 0.5, "colour": 0.5, "color": 0.5, "department": 0.5}


@dataclass(frozen=True)
class GoodBetterBestParams:
    min_per_tier: int = 2
    min_gap: float = 1.25


@dataclass
class GoodBetterBestModel:
    """Table ``products``: id, leaf, price, tier (0..2 or -1), popularity, match attributes."""

    products: pl.DataFrame
    params: GoodBetterBestParams
    model_type: ModelType = ModelType.GOOD_BETTER_BEST

    def __post_init__(self) -> None:
        df = self.products
        self.ids = df["id"].to_list()
        self.index = {x: j for j, x in enumerate(self.ids)}
        self.leaf = df["leaf"].to_numpy()
        self.price = df["price"].to_numpy().astype(np.float64)
        self.tier = df["tier"].to_numpy()
        self.pop = df["popularity"].to_numpy().astype(np.float64)
        self.match_cols = [c for c in MATCH_COLUMNS if c in df.columns]
        self.match = {c: df[c].cast(pl.Utf8).to_numpy() for c in self.match_cols}
        groups = df.with_row_index("j").group_by("leaf").agg(pl.col("j"))
        self.members = dict(
            zip(groups["leaf"].to_list(), [np.array(x) for x in groups["j"].to_list()], strict=True)
        )

    def tiers(self, item_id: str, allowed=None, exclude: frozenset[str] = frozenset()) -> list[Scored]:
        """Up to three Scored with labels good/better/best, cheapest first; ``[]`` for an unknown item."""
        j = self.index.get(item_id)
        if j is None or self.tier[j] < 0:
            return []
        cand = self.members[self.leaf[j]]
        cand = cand[self.tier[cand] >= 0]
        match = np.zeros(len(cand))
        for c in self.match_cols:
            v = self.match[c][j]
            if v is not None and v == v:  # not null / NaN
                match += MATCH_COLUMNS[c] * (self.match[c][cand] == v)
        out: list[Scored] = []
        for t, label in enumerate(LABELS):
            in_t = cand[(self.tier[cand] == t)]
            m = match[self.tier[cand] == t]
            if len(in_t) == 0:
                continue
            median = np.median(self.price[in_t])
            closeness = -np.abs(np.log(self.price[in_t] / median))
            if t == self.tier[j]:  # the seed's tier: its closest peer in price
                closeness = -np.abs(np.log(self.price[in_t] / self.price[j]))
            order = np.lexsort((-closeness, -m, -self.pop[in_t]))
            for o in order:
                pid = self.ids[in_t[o]]
                if pid == item_id or pid in exclude or (allowed is not None and not allowed(pid)):
                    continue
                out.append(Scored(pid, float(self.price[in_t[o]]), label))
                break
        return _honest(out, self.params.min_gap)

    def recommend(self, ctx: RecContext) -> list[Scored]:
        """Tiers of the first known seed (labels good/better/best), at most ``ctx.k``."""
        for seed in ctx.seeds:
            if seed in self.index:
                return self.tiers(seed, ctx.allowed, frozenset(ctx.seeds) | ctx.exclude)[: ctx.k]
        return []

    def to_table(self) -> pl.DataFrame:
        return self.products

    def with_changes(self, changes: Mapping[str, tuple[float | None, Any] | None]) -> GoodBetterBestModel:
        """A copy with the products of ``changes`` placed again, as the catalog now has them (``id ->
        (price, leaf)``; None: deleted, so in no tier). Each is re-tiered against its leaf's bounds as
        trained (the highest good and better prices): a leaf the model gave no tiers, a new leaf or no
        positive price puts it in none. A product new to the model joins with popularity 0 and no match
        attributes. ``self`` is left as it is; O(products) per call (serving keeps one per snapshot)."""
        fresh = [pid for pid, change in changes.items() if pid not in self.index and change is not None]
        new = copy.copy(self)
        n, pad = len(self.ids), len(fresh)
        new.ids = self.ids + fresh
        new.index = {**self.index, **{pid: n + i for i, pid in enumerate(fresh)}}
        new.leaf = np.concatenate([self.leaf.astype(object), np.full(pad, None, dtype=object)])
        new.price = np.concatenate([self.price, np.zeros(pad)])
        new.tier = np.concatenate([self.tier, np.full(pad, -1, dtype=self.tier.dtype)])
        new.pop = np.concatenate([self.pop, np.zeros(pad)])
        new.match = {
            c: np.concatenate([v.astype(object), np.full(pad, None, dtype=object)])
            for c, v in self.match.items()
        }
        bounds = self.tier_bounds()
        moved: set[Any] = set()
        for pid, change in changes.items():
            j = new.index.get(pid)
            if j is None:
                continue
            price, leaf = change if change is not None else (None, new.leaf[j])
            leaf = None if leaf is None else str(leaf)
            if leaf != new.leaf[j]:
                moved.update((new.leaf[j], leaf))
                new.leaf[j] = leaf
            ok = isinstance(price, int | float) and price > 0
            new.price[j] = float(price) if ok else 0.0  # type: ignore[arg-type]
            new.tier[j] = _tier_of(bounds.get(leaf), float(price)) if ok and change is not None else -1  # type: ignore[arg-type]
        new.members = dict(self.members)
        for leaf in moved - {None}:
            new.members[leaf] = np.flatnonzero(new.leaf == leaf)
        return new

    def tier_bounds(self) -> dict[Any, tuple[float, float]]:
        """Leaf -> (highest good price, highest better price) as trained, for the leaves with tiers."""
        cached: dict[Any, tuple[float, float]] | None = getattr(self, "_bounds", None)
        if cached is None:
            top = (
                self.products.filter(pl.col("tier") >= 0)
                .group_by("leaf")
                .agg(
                    good=pl.col("price").filter(pl.col("tier") == 0).max(),
                    better=pl.col("price").filter(pl.col("tier") <= 1).max(),
                )
            )
            cached = {
                leaf: (float(g if g is not None else 0.0), float(b if b is not None else g or 0.0))
                for leaf, g, b in top.iter_rows()
            }
            self._bounds = cached
        return cached

    def params_dict(self) -> dict:
        return asdict(self.params)


def _tier_of(bounds: tuple[float, float] | None, price: float) -> int:
    """The tier of ``price`` in a leaf of trained ``bounds`` (-1 when the leaf has none)."""
    if bounds is None:
        return -1
    return 0 if price <= bounds[0] else 1 if price <= bounds[1] else 2


def _honest(picks: list[Scored], min_gap: float) -> list[Scored]:
    """Drop picks that are not at least ``min_gap`` apart in price from the previous kept one."""
    kept: list[Scored] = []
    for s in picks:
        if not kept or s.score >= kept[-1].score * min_gap:
            kept.append(s)
    return kept if len(kept) >= 2 else []


def train_good_better_best(
    products: pl.DataFrame, popularity: pl.DataFrame | None = None, params: GoodBetterBestParams | None = None
) -> GoodBetterBestModel:
    """Assign price tiers per leaf category.

    Args:
        products: catalog with ``id``, a price column (``price``) and a leaf column (first of
            :data:`LEAF_COLUMNS` present).
        popularity: optional ``item_id, popularity`` (e.g. baskets sold); best sellers win their tier.
    Raises:
        ValueError: the catalog has no price or no category column.
    """
    leaf, keep = tier_columns(products.columns)
    df = products.select(
        pl.col("id").cast(pl.Utf8),
        pl.col(leaf).cast(pl.Utf8).alias("leaf"),
        pl.col("price").cast(pl.Float64),
        *keep,
    ).filter(pl.col("leaf").is_not_null() & (pl.col("price") > 0))
    if popularity is not None:
        pop = popularity.select(
            pl.col("item_id").cast(pl.Utf8).alias("id"), pl.col("popularity").cast(pl.Float64)
        )
        df = df.join(pop, on="id", how="left")
    else:
        df = df.with_columns(popularity=pl.lit(0.0))
    df = df.with_columns(pl.col("popularity").fill_null(0.0), lp=pl.col("price").log())
    bounds = df.group_by("leaf").agg(
        q1=pl.col("lp").quantile(1 / 3, "linear"), q2=pl.col("lp").quantile(2 / 3, "linear"), n=pl.len()
    )
    return assign_tiers(df, bounds, params or GoodBetterBestParams())


def tier_columns(columns: list[str]) -> tuple[str, list[str]]:
    """The leaf column (first of :data:`LEAF_COLUMNS` present) and the match columns of a catalog.

    Raises:
        ValueError: the catalog has no price or no category column.
    """
    leaf = next((c for c in LEAF_COLUMNS if c in columns), None)
    if leaf is None or "price" not in columns:
        raise ValueError(f"GOOD_BETTER_BEST needs a price and one of {LEAF_COLUMNS} in the catalog")
    return leaf, [c for c in MATCH_COLUMNS if c in columns]


def assign_tiers(df: pl.DataFrame, bounds: pl.DataFrame, p: GoodBetterBestParams) -> GoodBetterBestModel:
    """The model from priced products and their leaves' tier bounds, whichever engine computed them.

    ``df``: ``id, leaf, price, <match columns>, popularity, lp`` (log price), priced products with a
    leaf; ``bounds``: ``leaf, q1, q2, n``, the 1/3 and 2/3 quantiles of ``lp`` (linear interpolation
    between order statistics) and the product count per leaf. A leaf of fewer than
    ``3 * min_per_tier`` products gets no tiers (-1). Products are kept in id order.
    """
    df = df.join(bounds, on="leaf").with_columns(
        tier=pl.when(pl.col("n") < 3 * p.min_per_tier)
        .then(-1)
        .when(pl.col("lp") <= pl.col("q1"))
        .then(0)
        .when(pl.col("lp") <= pl.col("q2"))
        .then(1)
        .otherwise(2)
        .cast(pl.Int8)
    )
    return GoodBetterBestModel(df.drop("lp", "q1", "q2", "n").sort("id", maintain_order=True), p)
