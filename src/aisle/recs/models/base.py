"""The contract between recommendation models and the services that serve them.

Training code (``aisle.recs.training``) writes artifacts; ``aisle.recs.registry`` records them;
the predict service loads a :class:`Recommender` per deployed model and calls ``recommend``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol, runtime_checkable


class ModelType(str, Enum):
    """Model types of the interface spec ("Model")."""

    CUSTOMERS_ALSO_VIEW = "CUSTOMERS_ALSO_VIEW"
    FREQUENTLY_BOUGHT_TOGETHER = "FREQUENTLY_BOUGHT_TOGETHER"
    SIMILAR_ITEMS = "SIMILAR_ITEMS"
    GOOD_BETTER_BEST = "GOOD_BETTER_BEST"
    BUNDLE_RECOMMENDATIONS = "BUNDLE_RECOMMENDATIONS"


@dataclass(frozen=True, slots=True)
class Scored:
    """One recommended item: product id, model score (higher is better), optional tier label."""

    item_id: str
    score: float
    label: str | None = None


@dataclass(frozen=True)
class RecContext:
    """What a model sees of one request.

    Attributes:
        seeds: the request's ``productIds`` (at least one).
        k: how many items to return at most.
        session: the visitor's recent product ids, oldest first (empty without ``visitorId``).
        exclude: ids never to return (the seeds themselves are always excluded by the model).
        allowed: optional candidate predicate (filters, stock); models should skip items it rejects
            rather than return fewer than ``k`` when more allowed candidates exist.
    """

    seeds: Sequence[str]
    k: int
    session: Sequence[str] = ()
    exclude: frozenset[str] = field(default_factory=frozenset)
    allowed: Callable[[str], bool] | None = None


@runtime_checkable
class Recommender(Protocol):
    """A loaded, ready-to-serve model."""

    model_type: ModelType

    def recommend(self, ctx: RecContext) -> list[Scored]:
        """Ranked items for ``ctx``, best first, at most ``ctx.k``; unknown seeds give ``[]``."""
        ...
