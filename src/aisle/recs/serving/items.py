"""What a predict request gets back: one :class:`ItemOut` per ranked item (spec "RecommendationItem"),
in a :class:`Prediction` that also says what the answer had to do without."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aisle.recs.serving.personal import Personal
from aisle.recs.serving.products import ProductTable
from aisle.recs.serving.query import PredictParams
from aisle.recs.serving.rank import Ranked


@dataclass
class ItemOut:
    """One RecommendationItem (spec): product fields only with ``returnProduct``."""

    id: str
    score: float | None = None
    label: str | None = None
    name: str | None = None
    description: str | None = None
    price: float | None = None
    explanation: dict[str, Any] | None = None


@dataclass
class Prediction:
    """The items of a request and ``degraded``: the codes of what the answer did without (e.g.
    ``event_store_unavailable``: not personalised while the event store is unreachable); empty when
    the answer is complete."""

    items: list[ItemOut]
    degraded: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    """The models of the slots that ran, in placement order."""
    experiments: list[tuple[str, str]] = field(default_factory=list)
    """The ``(experimentId, variantId)`` of each running experiment the visitor was served."""


def item_out(r: Ranked, table: ProductTable, params: PredictParams, personal: Personal) -> ItemOut:
    """``r`` as the response shows it: the score rounded to 6 decimals (``returnScore``), name,
    description and price from the catalog (``returnProduct``), and with ``debug`` an explanation
    (model, slot, model score, rules that matched, brand affinity, backfill, session length)."""
    out = ItemOut(id=r.item_id, label=r.label)
    if params.return_score:
        out.score = round(r.score, 6)
    row = table.row(r.item_id)
    if params.return_product and row is not None:
        name = table.value(row, table.title_field)
        desc = table.value(row, table.description_field)
        price = table.value(row, table.price_field)
        out.name = None if name is None else str(name)
        out.description = None if desc is None else str(desc)
        out.price = float(price) if isinstance(price, int | float) else None
    if params.debug:
        out.explanation = {
            "modelId": r.model.model_id,
            "modelType": r.model.model_type.value,
            "modelVersion": r.model.version,
            "slotConfigId": r.slot.slotConfigId,
            "modelScore": r.model_score,
            "rules": r.rules,
            "brandAffinity": round(r.affinity, 6),
            "backfill": r.backfill is not None,
            "backfillFrom": r.backfill,
            "sessionLength": len(personal.session),
        }
    return out
