"""What a predict request asks: :class:`PredictQuery` and its :class:`PredictParams` (spec "PredictRequest").

The predict service parses the HTTP body into these; the engine never sees FastAPI or pydantic request
models. :class:`NotWarm` is how the engine's cache lookups say a request needs I/O (see
:meth:`PredictEngine.readiness`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from aisle.recs.actions import PredictAction
from aisle.recs.diversity import DiversityLevel
from aisle.recs.serving.popularity import BackfillOrder


@dataclass(frozen=True)
class PredictParams:
    """``predictParams`` of the spec, parsed."""

    return_product: bool = False
    return_score: bool = True
    strict_filtering: bool = False
    diversity_level: DiversityLevel | None = None
    debug: bool = False
    container_rules: bool = True
    """Apply the container's saved recommendation rules before the actions (False: the actions only)."""
    backfill_order: BackfillOrder | None = None
    """How a short list is backfilled (None: the slot's option, else ``popular``; see
    :mod:`aisle.recs.serving.backfill`)."""


@dataclass(frozen=True)
class PredictQuery:
    """One request: the container, its seed products, who asks (``visitorId``, ``userId``) and where
    (``store_id``: the request's ``storeId``, whose inventory filters or boosts, see
    :mod:`aisle.recs.serving.stock`)."""

    container_id: str
    seeds: Sequence[str]
    model_ids: Sequence[str] | None = None
    visitor_id: str | None = None
    user_id: str | None = None
    actions: Sequence[PredictAction] = ()
    params: PredictParams = field(default_factory=PredictParams)
    store_id: str | None = None


class NotWarm(Exception):
    """Raised by the engine's lookups from the caches alone (``warm_only=True``) when answering needs
    I/O beyond local file reads (a model or catalog to load, configuration to refresh): inside the
    engine only, where :meth:`PredictEngine.readiness` answers that the request waits."""
