"""Backfill of a non-strict slot whose model returned too few items (after the model's own neighbours).

In order, keeping only items the request allows and not yet chosen:

1. the seeds' categories, the leaf first then each parent level of an ``"A > B > C"`` path; within a
   category, most popular first (``popular``) or most trending first (``trending``) when the tenant
   has a popularity artifact (:mod:`aisle.recs.serving.popularity`; items it does not hold follow in
   catalog order), else catalog order. Source ``category:popular``, ``category:trending`` or
   ``category``;
2. with an artifact, the tenant's most popular (or trending) products of the catalog: the fallback of a
   seed the catalog does not know or that has no category, and of a category too small to fill the
   list. Source ``popular`` or ``trending``;
3. only when FILTER actions narrowed the list (``wide``): any allowed item in catalog order. Source
   ``filter``.

Without an artifact (or with an empty one, or order ``catalog``) this is the backfill predict had
before popularity existed: steps 1 (catalog order) and 3.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from aisle.recs.serving.popularity import BackfillOrder, ServedPopularity
from aisle.recs.serving.products import ProductTable


def backfill(
    table: ProductTable,
    seeds: Sequence[str],
    allowed: Callable[[str], bool],
    seen: set[str],
    n: int,
    *,
    wide: bool,
    popularity: ServedPopularity | None = None,
    order: BackfillOrder = "popular",
) -> list[tuple[str, str]]:
    """Up to ``n`` ``(item, source)`` pairs, best first (see the module docstring); adds them to ``seen``."""
    ranked = popularity is not None and bool(popularity.popularity) and order != "catalog"
    seed_rows = [r for r in (table.row(s) for s in seeds) if r is not None]
    out: list[tuple[str, str]] = []

    def take(items: Iterable[str], source: str) -> bool:
        for item in items:
            if item not in seen and allowed(item):
                seen.add(item)
                out.append((item, source))
                if len(out) >= n:
                    return True
        return False

    if not ranked:
        if take((table.ids[r] for r in table.same_category_rows(seed_rows)), "category") or not wide:
            return out
    else:
        assert popularity is not None
        for category, _ in table.same_category_levels(seed_rows):
            if take(_by_score(table, popularity, order, category), f"category:{order}"):
                return out
        in_catalog = (lambda i: True) if not table.ids else (lambda i: i in table.index)
        if take((i for i in popularity.order(order) if in_catalog(i)), order):
            return out
        if not wide:
            return out
    take(table.ids, "filter")
    return out


def _by_score(
    table: ProductTable, popularity: ServedPopularity, order: BackfillOrder, category: Any
) -> list[str]:
    """The products of ``category`` by the order's score, highest first, unscored ones after them in
    catalog order. Cached per (table snapshot, category, order) on the artifact, which is replaced
    when a new version is published."""
    if popularity.sorted_version != table.key:  # a new catalog or change-log snapshot: drop the orders
        popularity.sorted_categories = {}
        popularity.sorted_version = table.key
    key = (table.key, category, order)
    hit = popularity.sorted_categories.get(key)
    if hit is None:
        score = popularity.key(order)
        items = [table.ids[r] for r in table.category_rows(category)]
        hit = sorted(items, key=lambda i: -score.get(i, 0.0))  # stable: catalog order among equals
        popularity.sorted_categories[key] = hit
    return hit
