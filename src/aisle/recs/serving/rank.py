"""Ranking of one predict request: slots, FILTER/BOOST/BURY actions, backfill, personalisation, MMR.

Score arithmetic, per slot: the model's scores over the slot's candidate pool are min-max normalised
to [0, 1]; each matching BOOST adds its ``weight``, each matching BURY subtracts it (so weight 1 moves
an item across the whole model range, 0.1 nudges it); brand affinity adds
``affinity_weight * affinity(brand)`` with affinities scaled to [-1, 1]. Backfilled items start at
-1, below every model item. The final score is what the response returns; with a popularity artifact
(:mod:`aisle.recs.serving.popularity`) equal scores go to the more popular item first.

A product deleted through the change log (``ProductTable.gone``) is never a candidate, whichever model
names it; the tenant's stock rule (:mod:`aisle.recs.serving.stock`) filters with the FILTER actions and
orders by its tiers before the scores (a buried product after every one in stock, whatever its score).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from aisle.core.errors import BadRequest, ErrorCode
from aisle.recs.actions import PredictAction
from aisle.recs.containers import SlotConfig
from aisle.recs.diversity import DiversityLevel, mmr
from aisle.recs.models.base import RecContext
from aisle.recs.serving.backfill import backfill
from aisle.recs.serving.conditions import RowPredicate, compile_condition
from aisle.recs.serving.models import ServedModel
from aisle.recs.serving.personal import Personal
from aisle.recs.serving.popularity import BackfillOrder, ServedPopularity
from aisle.recs.serving.products import ProductTable
from aisle.recs.serving.query import PredictParams
from aisle.recs.serving.stock import StockRule


@dataclass(frozen=True)
class CompiledAction:
    index: int
    type: str
    weight: float
    matches: RowPredicate
    slot: str | None

    def applies(self, slot_id: str) -> bool:
        return self.slot is None or self.slot == slot_id


def compile_actions(
    actions: Sequence[PredictAction], table: ProductTable, slot_ids: set[str]
) -> list[CompiledAction]:
    """Raises BadRequest: ``action_slot_unknown`` or ``condition_field_unknown``."""
    out = []
    for i, action in enumerate(actions):
        if action.slotConfigId is not None and action.slotConfigId not in slot_ids:
            raise BadRequest(
                f"actions[{i}].slotConfigId '{action.slotConfigId}' is not a slot of the container "
                f"(slots: {', '.join(sorted(slot_ids))})",
                code=ErrorCode.ACTION_SLOT_UNKNOWN,
            )
        matches = compile_condition(action.condition, table) if action.condition is not None else _always
        out.append(CompiledAction(i, action.type, action.weight, matches, action.slotConfigId))
    return out


def _always(_: int) -> bool:
    return True


@dataclass
class Ranked:
    """One chosen item with how it got there."""

    item_id: str
    score: float
    label: str | None
    slot: SlotConfig
    model: ServedModel
    model_score: float | None
    rules: list[dict[str, Any]]
    affinity: float
    backfill: str | None
    """None for the model's own items; for backfill of a non-strict slot, where it came from:
    ``neighbours`` (recommended for the model's items), ``category`` (the seeds' categories in catalog
    order), ``category:popular`` / ``category:trending`` (the seeds' categories by popularity or
    trending), ``popular`` / ``trending`` (the tenant's most popular or trending products) or
    ``filter`` (any allowed item); see :mod:`aisle.recs.serving.backfill`."""


@dataclass(frozen=True)
class RankOptions:
    """Request-wide options: ``strict`` filtering, ``diversity``, the tenant's ``popularity`` artifact
    (None: backfill in catalog order), the ``backfill_order`` asked for (None: the slot's option,
    else ``popular``) and the ``stock`` rule (None: stock changes nothing)."""

    strict: bool = False
    diversity: DiversityLevel | None = None
    popularity: ServedPopularity | None = None
    backfill_order: BackfillOrder | None = None
    stock: StockRule | None = None

    @classmethod
    def of(
        cls, params: PredictParams, popularity: ServedPopularity | None, stock: StockRule | None = None
    ) -> RankOptions:
        """The options of a request's ``predictParams``, the tenant's popularity artifact and stock rule."""
        return cls(params.strict_filtering, params.diversity_level, popularity, params.backfill_order, stock)


def rank_slot(
    slot: SlotConfig,
    model: ServedModel,
    seeds: Sequence[str],
    table: ProductTable,
    actions: Sequence[CompiledAction],
    personal: Personal,
    taken: set[str],
    options: RankOptions,
) -> list[Ranked]:
    """The slot's ``itemCount`` items, best first, none in ``taken`` (updated with the picks).

    Non-strict slots backfill a short list with the model's recommendations for its own first items,
    then the seeds' categories (by popularity when the tenant has a popularity artifact), the tenant's
    most popular products (with one) and, when FILTER actions narrow the list, the rest of the catalog,
    keeping only items the filters allow (:mod:`aisle.recs.serving.backfill`).
    """
    filters = [a for a in actions if a.type == "FILTER" and a.applies(slot.slotConfigId)]
    shapers = [a for a in actions if a.type != "FILTER" and a.applies(slot.slotConfigId)]
    strict = options.strict if slot.options.strictFiltering is None else slot.options.strictFiltering
    level: DiversityLevel = options.diversity or slot.options.diversityLevel or "none"
    excluded = set(seeds) | personal.purchased | taken
    stock = options.stock
    allowed = _allowed(table, filters, excluded, stock)
    need = slot.itemCount
    tiered = stock is not None and stock.orders
    reranks = bool(shapers) or level != "none" or bool(personal.brand_affinity) or tiered
    # a wider pool lets rules and MMR pull items up from below the cut; +20 keeps the single-seed
    # fast path of neighbour-list models (50 precomputed neighbours) for the usual 20 items
    pool_k = (min(need * 3, 300) if level != "none" else need + 20) if reranks else need
    ctx = RecContext(
        seeds=list(seeds), k=pool_k, session=personal.session, exclude=frozenset(excluded), allowed=allowed
    )
    scored = [s for s in model.recommender.recommend(ctx) if allowed(s.item_id)]
    # (item, model score, label, source): source None for the model's own items, else how it was found
    pool: list[tuple[str, float | None, str | None, str | None]] = []
    seen: set[str] = set()
    for s in scored:
        if s.item_id not in seen:
            seen.add(s.item_id)
            pool.append((s.item_id, s.score, s.label, None))
    if not strict and pool and len(pool) < need:
        # neighbours of the model's own items: still the model's notion of related, unlike a category
        more = RecContext(
            seeds=[p[0] for p in pool[:5]],
            k=need,
            session=(),
            exclude=frozenset(excluded | seen),
            allowed=allowed,
        )
        for s in model.recommender.recommend(more):
            if s.item_id not in seen and allowed(s.item_id) and len(pool) < need:
                seen.add(s.item_id)
                pool.append((s.item_id, s.score, s.label, "neighbours"))
    if not strict and len(pool) < need:
        order = options.backfill_order or slot.options.backfillOrder or "popular"
        more_items = backfill(
            table, seeds, allowed, seen, need - len(pool), wide=bool(filters),
            popularity=options.popularity, order=order,
        )  # fmt: skip
        pool += [(item, None, None, source) for item, source in more_items]
    model_scores = [s for _, s, _, src in pool if src is None and s is not None]
    lo, hi = (min(model_scores), max(model_scores)) if model_scores else (0.0, 0.0)
    ranked: list[Ranked] = []
    for pos, (item, raw, label, source) in enumerate(pool):
        if source is None:
            base = (raw - lo) / (hi - lo) if hi > lo and raw is not None else 1.0
        else:  # backfill stays below every model item unless a rule lifts it
            base = (-0.5 if source == "neighbours" else -1.0) - pos * 1e-6
        row = table.row(item)
        rules: list[dict[str, Any]] = []
        score = base
        for a in shapers:
            if row is not None and a.matches(row):
                delta = a.weight if a.type == "BOOST" else -a.weight
                score += delta
                rules.append({"index": a.index, "type": a.type, "weight": a.weight})
        affinity = 0.0
        if personal.brand_affinity and row is not None:
            affinity = personal.brand_affinity.get(str(table.brand(row)), 0.0) * personal.affinity_weight
            score += affinity
        ranked.append(Ranked(item, score, label, slot, model, raw, rules, affinity, source))
    groups = [ranked]
    if tiered:
        assert stock is not None
        tiers = [stock.tier(table, table.row(r.item_id)) for r in ranked]
        groups = [[r for r, t in zip(ranked, tiers, strict=True) if t == k] for k in sorted(set(tiers))]
    chosen: list[Ranked] = []
    for group in groups:
        chosen += _choose(group, need - len(chosen), level, table, options)
    taken.update(r.item_id for r in chosen)
    return chosen


def _choose(
    ranked: list[Ranked], need: int, level: DiversityLevel, table: ProductTable, options: RankOptions
) -> list[Ranked]:
    """The best ``need`` of ``ranked``: by score (equal scores: the more popular first), or by MMR."""
    if need <= 0 or not ranked:
        return []
    if level == "none":
        if options.popularity is not None:  # equal scores: the more popular item first
            pop = options.popularity.popularity
            ranked.sort(key=lambda r: (-r.score, -pop.get(r.item_id, 0.0)))
        else:
            ranked.sort(key=lambda r: -r.score)
        return ranked[:need]
    rows = [table.row(r.item_id) for r in ranked]
    cats = [None if row is None else table.category(row) for row in rows]
    brands = [None if row is None else table.brand(row) for row in rows]
    return [ranked[i] for i in mmr([r.score for r in ranked], cats, brands, need, level)]


def _allowed(
    table: ProductTable, filters: Sequence[CompiledAction], excluded: set[str], stock: StockRule | None
) -> Callable[[str], bool]:
    """Whether an item may be a candidate: not ``excluded``, not deleted, passing the FILTER actions
    (which only products of the table pass) and the stock rule."""
    index, gone = table.index, table.gone
    if stock is not None:
        predicates = [f.matches for f in filters]

        def allowed_in_stock(item: str) -> bool:
            row = index.get(item)
            if item in excluded or item in gone or (predicates and row is None):
                return False
            return stock.allows(table, row) and all(p(row) for p in predicates)  # type: ignore[arg-type]

        return allowed_in_stock
    if not filters:
        if gone:
            return lambda item: item not in excluded and item not in gone
        return lambda item: item not in excluded

    if len(filters) == 1:
        only = filters[0].matches

        def allowed_one(item: str) -> bool:
            row = index.get(item)
            return row is not None and item not in excluded and only(row)

        return allowed_one
    predicates = [f.matches for f in filters]

    def allowed(item: str) -> bool:
        row = index.get(item)
        if row is None or item in excluded:
            return False
        return all(p(row) for p in predicates)

    return allowed
