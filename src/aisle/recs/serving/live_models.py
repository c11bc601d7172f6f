"""Models trained on a catalog version, served with the product writes since (issue 41).

GOOD_BETTER_BEST places each product in a price tier of its leaf category at training. A price or
category written through the product API since then must take effect at once, not at the next training:
the engine serves the model with the products its table has written since the version re-tiered
(:meth:`~aisle.recs.models.good_better_best.GoodBetterBestModel.with_changes`: against the tier bounds
as trained; a deleted product in no tier). One re-tiered copy is kept per (tenant, model) for the table
snapshot it was made for, so a run of requests between two writes pays for it once (a copy of the
model's arrays: milliseconds at tens of thousands of products).

Other model types need nothing here: what they return is filtered and shaped through the table
(deleted products, filters, stock), and a SIMILAR_ITEMS seed they do not know is answered from vectors
(:mod:`aisle.recs.serving.cold_start`).
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from aisle.recs.models.base import ModelType
from aisle.recs.models.good_better_best import LEAF_COLUMNS
from aisle.recs.serving.models import ServedModel
from aisle.recs.serving.products import ProductTable
from aisle.recs.serving.query import NotWarm


class LiveModels:
    """The served form of each model for a table snapshot (see the module docstring). Thread-safe."""

    def __init__(self) -> None:
        self._live: dict[tuple[str, str], tuple[Any, ServedModel]] = {}
        self._lock = threading.Lock()

    def entry_count(self) -> int:
        """Models held re-tiered."""
        return len(self._live)

    def served(
        self, tenant: str, model: ServedModel, table: ProductTable, *, warm_only: bool = False
    ) -> ServedModel:
        """``model`` as of ``table``: itself unless a GOOD_BETTER_BEST model and products were written
        since the table's version. Raises NotWarm when ``warm_only`` and the copy is still to be made
        (milliseconds of CPU: not on the event loop)."""
        with_changes = getattr(model.recommender, "with_changes", None)
        if model.model_type != ModelType.GOOD_BETTER_BEST or with_changes is None:
            return model
        if not table.written and not table.gone:
            return model
        key = (tenant, model.model_id)
        stamp = (id(model.recommender), table.key)
        hit = self._live.get(key)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        if warm_only:
            raise NotWarm(f"{model.model_id} as of change {table.seq}")
        live = replace(model, recommender=with_changes(changes_of(table)))
        with self._lock:
            self._live[key] = (stamp, live)
        return live


def changes_of(table: ProductTable) -> dict[str, tuple[Any, Any] | None]:
    """What the table's writes since its version changed for price tiers: ``id -> (price, leaf)``,
    None for a deleted product. The leaf is the first of GOOD_BETTER_BEST's leaf columns the table has."""
    leaf_field = next((c for c in LEAF_COLUMNS if c in table.columns), None)
    changes: dict[str, tuple[Any, Any] | None] = dict.fromkeys(table.gone)
    for pid in table.written:
        row = table.row(pid)
        if row is not None:
            changes[pid] = (table.value(row, table.price_field), table.value(row, leaf_field))
    return changes
