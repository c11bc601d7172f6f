"""What one recommendation reads, looked up before any ranking: :class:`Prepared`.

:meth:`~aisle.recs.serving.engine.PredictEngine.readiness` looks it all up from the caches alone (no
I/O) to tell whether a request waits for nothing, and hands it back to
:meth:`~aisle.recs.serving.engine.PredictEngine.recommend`, which then only ranks; a request that may
wait looks it up on the thread pool, reading storage and events as it needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aisle.recs.containers import SlotConfig
from aisle.recs.serving.models import ServedModel
from aisle.recs.serving.personal import Personal
from aisle.recs.serving.products import ProductTable
from aisle.recs.serving.query import PredictQuery
from aisle.recs.serving.rank import CompiledAction, RankOptions


@dataclass(frozen=True)
class Prepared:
    """One request's parts: ``query`` (the request they were looked up for), the container's ``slots``
    in placement order with their loaded ``models`` (same order), the catalog ``table``, the compiled
    ``actions`` (saved rules, then the request's), the visitor's ``personal`` signals, the ranking
    ``options`` and the experiments ``served`` ((experiment id, variant) pairs)."""

    query: PredictQuery
    slots: Sequence[SlotConfig]
    models: Sequence[ServedModel]
    table: ProductTable
    actions: Sequence[CompiledAction]
    personal: Personal
    options: RankOptions
    served: list[tuple[str, str]]
