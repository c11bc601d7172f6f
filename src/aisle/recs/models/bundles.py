"""BUNDLE_RECOMMENDATIONS: bundle plans from category-level co-purchase, filled with products.

Plans: for the seed's category ``A`` the complementary categories ``B`` are ranked by
``P(B | A) * log(lift(A, B))`` over baskets (association rules at category level, Agrawal & Srikant 1994;
the log-lift factor keeps staples that go with everything from crowding every plan), keeping pairs seen in
at least ``min_support`` baskets with lift above ``min_lift``. The top categories form up to
``plans_per_seed`` plans of ``categories_per_plan`` categories each.

Filling a plan's category ``B`` (``per_category`` products each):

* ``top_products``: the category's best sellers (baskets holding the product);
* ``fbt``: products of ``B`` most often bought with the plan's other categories,
  ``sum_C P(b | C)`` over the plan's categories ``C != B`` (and the seed's category when known);
* ``hybrid`` (default): the mean of both scores, each scaled to [0, 1] within the category.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Literal, Protocol

import polars as pl
from pydantic import BaseModel, Field

from aisle.recs.models.base import ModelType, RecContext, Scored

Strategy = Literal["hybrid", "fbt", "top_products"]


class BundleProduct(BaseModel):
    id: str
    score: float | None = None


class BundleCategory(BaseModel):
    category: str
    products: list[BundleProduct] = Field(default_factory=list)


class BundlePlan(BaseModel):
    """A bundle (spec "ProductBundle"): name, description, categories (products empty until filled)."""

    name: str
    description: str = ""
    categories: list[BundleCategory] = Field(default_factory=list)


@dataclass(frozen=True)
class BundleParams:
    min_support: int = 20
    min_lift: float = 1.2
    plans_per_seed: int = 2
    categories_per_plan: int = 3
    top_per_category: int = 50


@dataclass
class BundleModel:
    """Tables: ``item_category`` (item_id, category), ``complements`` (category, complement, score),
    ``top`` (category, item_id, popularity) best sellers,
    ``cat_item`` (category, item_id, p = P(item | category))."""

    item_category: pl.DataFrame
    complements: pl.DataFrame
    top: pl.DataFrame
    cat_item: pl.DataFrame
    params: BundleParams
    model_type: ModelType = ModelType.BUNDLE_RECOMMENDATIONS

    def __post_init__(self) -> None:
        self.category_of = dict(
            zip(
                self.item_category["item_id"].to_list(), self.item_category["category"].to_list(), strict=True
            )
        )
        comp = (
            self.complements.sort("score", descending=True)
            .group_by("category", maintain_order=True)
            .agg("complement")
        )
        self.comp = dict(zip(comp["category"].to_list(), comp["complement"].to_list(), strict=True))
        top = (
            self.top.sort("popularity", descending=True)
            .group_by("category", maintain_order=True)
            .agg("item_id", "popularity")
        )
        self.best = {c: list(zip(i, p, strict=True)) for c, i, p in top.iter_rows()}
        ci = self.cat_item.group_by("category").agg("item_id", "p")
        self.with_cat = {c: dict(zip(i, p, strict=True)) for c, i, p in ci.iter_rows()}

    def plans(self, product_id: str) -> list[BundlePlan]:
        """Bundle plans of the product, products not yet filled; ``[]`` for an unknown product."""
        cat = self.category_of.get(product_id)
        if cat is None:
            return []
        comps = self.comp.get(cat, [])
        n = self.params.categories_per_plan
        out = []
        for k in range(self.params.plans_per_seed):
            chunk = comps[k * n : (k + 1) * n]
            if not chunk:
                break
            name = f"Complete your {cat.lower()}" if k == 0 else f"More to go with {cat.lower()}"
            desc = f"Shoppers who buy {cat.lower()} often add {', '.join(c.lower() for c in chunk)}."
            out.append(
                BundlePlan(
                    name=name, description=desc, categories=[BundleCategory(category=c) for c in chunk]
                )
            )
        return out

    def fill(
        self,
        plans: list[BundlePlan],
        strategy: Strategy = "hybrid",
        per_category: int = 3,
        allowed: Callable[[str], bool] | None = None,
        seed: str | None = None,
    ) -> list[BundlePlan]:
        """Copies of ``plans`` with ``per_category`` products per category, best first.

        Raises:
            ValueError: unknown ``strategy``.
        """
        if strategy not in ("hybrid", "fbt", "top_products"):
            raise ValueError(f"unknown bundle strategy '{strategy}': use hybrid, fbt or top_products")
        seed_cat = self.category_of.get(seed) if seed else None
        out = []
        for plan in plans:
            names = [c.category for c in plan.categories]
            cats = []
            for c in names:
                others = [o for o in [*names, seed_cat] if o and o != c]
                ranked = self._rank(c, others, strategy)
                picked = [
                    BundleProduct(id=i, score=round(s, 6))
                    for i, s in ranked
                    if i != seed and (allowed is None or allowed(i))
                ][:per_category]
                cats.append(BundleCategory(category=c, products=picked))
            out.append(BundlePlan(name=plan.name, description=plan.description, categories=cats))
        return out

    def _rank(self, category: str, others: list[str], strategy: Strategy) -> list[tuple[str, float]]:
        best = self.best.get(category, [])
        top = {i: float(p) for i, p in best}
        fbt: dict[str, float] = {}
        for o in others:
            for i, p in self.with_cat.get(o, {}).items():
                if self.category_of.get(i) == category:
                    fbt[i] = fbt.get(i, 0.0) + float(p)
        if strategy == "top_products" or (strategy == "fbt" and not fbt):
            scores = top
        elif strategy == "fbt":
            scores = fbt
        else:
            mt, mf = max(top.values(), default=1.0) or 1.0, max(fbt.values(), default=1.0) or 1.0
            scores = {i: 0.5 * top.get(i, 0.0) / mt + 0.5 * fbt.get(i, 0.0) / mf for i in set(top) | set(fbt)}
        return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))

    def recommend(self, ctx: RecContext) -> list[Scored]:
        """Products of the first plan of the first known seed, flattened (for /predict); ``[]`` if none."""
        exclude = set(ctx.seeds) | ctx.exclude

        def allowed(i: str) -> bool:
            return i not in exclude and (ctx.allowed is None or ctx.allowed(i))

        for seed in ctx.seeds:
            plans = self.plans(seed)
            if plans:
                filled = self.fill(plans[:1], "hybrid", ctx.k, allowed, seed)
                flat = [Scored(p.id, p.score or 0.0) for c in filled[0].categories for p in c.products]
                return sorted(flat, key=lambda s: -s.score)[: ctx.k]
        return []

    def tables(self) -> dict[str, pl.DataFrame]:
        return {
            "item_category": self.item_category,
            "complements": self.complements,
            "top": self.top,
            "cat_item": self.cat_item,
        }

    def params_dict(self) -> dict:
        return asdict(self.params)


class BundleCounter(Protocol):
    """What an engine counts in the purchase lines for this model, on integer codes: baskets ``b``,
    items ``i`` and their categories ``k`` (:func:`bundle_codes`). Polars here
    (:class:`PolarsBundleCounter`), Spark in ``aisle.recs.spark.bundles``; every count is of distinct
    baskets."""

    def basket_count(self) -> int:
        """Baskets holding at least one item with a category."""
        ...

    def category_baskets(self) -> pl.DataFrame:
        """``k, n_a`` (Int64): baskets holding any item of category ``k``."""
        ...

    def category_pairs(self) -> pl.DataFrame:
        """``k, k2, c`` (Int64), ``k != k2``: baskets holding items of both categories."""
        ...

    def item_baskets(self) -> pl.DataFrame:
        """``i, k, popularity`` (Int64): baskets holding item ``i`` (of category ``k``)."""
        ...

    def category_item_baskets(self, pairs: pl.DataFrame) -> pl.DataFrame:
        """For each row ``C, k2`` of ``pairs``: ``C, k2, i, c`` (Int64), baskets holding category ``C``
        and item ``i`` of category ``k2``."""
        ...


def bundle_codes(categories: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(items, names)``: ``items`` is ``item_id, category, k, i`` (one row per item with a category,
    sorted by id, ``i`` its row), ``names`` is ``k, name`` (categories sorted by name). Int32 codes."""
    cats = (
        categories.select(pl.col("item_id").cast(pl.Utf8), pl.col("category").cast(pl.Utf8))
        .drop_nulls()
        .unique("item_id", keep="first", maintain_order=True)
        .sort("item_id")
    )
    cat_names = cats["category"].unique().sort()
    cat_code = pl.DataFrame(
        {"category": cat_names, "k": pl.int_range(len(cat_names), eager=True, dtype=pl.Int32)}
    )
    items = cats.join(cat_code, on="category", maintain_order="left").with_columns(
        i=pl.int_range(pl.len(), dtype=pl.Int32)
    )
    return items, cat_code.select("k", name="category")


class PolarsBundleCounter:
    """The embedded engine's :class:`BundleCounter` over ``tr``: distinct coded lines ``b, i, k``."""

    def __init__(self, tr: pl.DataFrame) -> None:
        self.tr = tr
        self.bc = tr.select("b", "k").unique()

    @classmethod
    def from_lines(cls, lines: pl.DataFrame, items: pl.DataFrame) -> PolarsBundleCounter:
        """From lines ``basket_id, item_id`` and the ``items`` of :func:`bundle_codes`."""
        tr = (
            lines.select(pl.col("basket_id").cast(pl.Utf8), pl.col("item_id").cast(pl.Utf8))
            .unique()
            .join(items.select("item_id", "i", "k"), on="item_id")
            .with_columns(b=pl.col("basket_id").rank("dense").cast(pl.Int32))
            .select("b", "i", "k")
        )
        return cls(tr)

    def basket_count(self) -> int:
        return self.tr["b"].n_unique()

    def category_baskets(self) -> pl.DataFrame:
        return self.bc.group_by("k").agg(n_a=pl.len().cast(pl.Int64))

    def category_pairs(self) -> pl.DataFrame:
        return (
            self.bc.join(self.bc.rename({"k": "k2"}), on="b")
            .filter(pl.col("k") != pl.col("k2"))
            .group_by("k", "k2")
            .agg(c=pl.len().cast(pl.Int64))
        )

    def item_baskets(self) -> pl.DataFrame:
        return self.tr.group_by("i", "k").agg(popularity=pl.len().cast(pl.Int64))

    def category_item_baskets(self, pairs: pl.DataFrame) -> pl.DataFrame:
        return (
            self.bc.rename({"k": "C"})
            .join(pairs.select("C", "k2"), on="C")
            .join(self.tr.rename({"k": "k2"}), on=["b", "k2"])
            .group_by("C", "k2", "i")
            .agg(c=pl.len().cast(pl.Int64))
        )


def train_bundles(
    lines: pl.DataFrame, categories: pl.DataFrame, params: BundleParams | None = None
) -> BundleModel:
    """Train from purchase lines ``basket_id, item_id`` and ``categories`` (``item_id, category``).

    Vectorised with polars on integer codes (baskets, items and categories are coded first, so the
    basket joins stay within a few hundred MB on Complete Journey): category pairs per basket, then
    confidence and lift per category pair, then item shares for the chosen pairs only.
    """
    items, names = bundle_codes(categories)
    return fit_bundles(PolarsBundleCounter.from_lines(lines, items), items, names, params or BundleParams())


def fit_bundles(
    counter: BundleCounter, items: pl.DataFrame, names: pl.DataFrame, p: BundleParams
) -> BundleModel:
    """The model from an engine's counts (module docstring): confidence and lift per category pair,
    the best complements per category, its best sellers, and item shares for the chosen pairs. Ties
    are broken by code (complement, then item), so both engines pick alike."""
    n = float(counter.basket_count())
    n_cat = counter.category_baskets()
    pairs = (
        counter.category_pairs()
        .filter(pl.col("c") >= p.min_support)
        .join(n_cat, on="k")
        .join(n_cat.rename({"k": "k2", "n_a": "n_b"}), on="k2")
        .with_columns(
            conf=pl.col("c") / pl.col("n_a"), lift=pl.col("c") * n / (pl.col("n_a") * pl.col("n_b"))
        )
        .filter(pl.col("lift") > p.min_lift)
        .with_columns(score=pl.col("conf") * pl.col("lift").log())
        .sort(["k", "score", "k2"], descending=[False, True, False])
        .group_by("k", maintain_order=True)
        .head(p.plans_per_seed * p.categories_per_plan)
        .select("k", "k2", "score")
    )
    top = (
        counter.item_baskets()
        .sort(["k", "popularity", "i"], descending=[False, True, False])
        .group_by("k", maintain_order=True)
        .head(p.top_per_category)
    )
    # P(item | basket holds category C), only for items of the complement categories of C
    cat_item = (
        counter.category_item_baskets(pairs.select(pl.col("k").alias("C"), "k2"))
        .join(n_cat.rename({"k": "C"}), on="C")
        .with_columns(p=pl.col("c") / pl.col("n_a"))
        .sort(["C", "k2", "p", "i"], descending=[False, False, True, False])
        .group_by("C", "k2", maintain_order=True)
        .head(p.top_per_category)
    )
    name = names
    item_id = items.select("i", "item_id")
    complements = (
        pairs.join(name, on="k", maintain_order="left")
        .join(name.rename({"k": "k2", "name": "complement"}), on="k2", maintain_order="left")
        .select(pl.col("name").alias("category"), "complement", "score")
    )
    top_named = (
        top.join(name, on="k", maintain_order="left")
        .join(item_id, on="i", maintain_order="left")
        .select(pl.col("name").alias("category"), "item_id", "popularity")
    )
    cat_item_named = (
        cat_item.join(name.rename({"k": "C"}), on="C", maintain_order="left")
        .join(item_id, on="i", maintain_order="left")
        .select(pl.col("name").alias("category"), "item_id", "p")
    )
    return BundleModel(items.select("item_id", "category"), complements, top_named, cat_item_named, p)
