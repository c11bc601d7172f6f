"""The tenant's popularity artifact as the predict engine uses it: backfill order and a blendable score.

Read from :mod:`aisle.recs.popularity_store` (the pointer at most :data:`POPULARITY_TTL_S` seconds
after it was last read; the tables only when it names another version). Without an artifact the
engine ranks as before it existed: backfill in catalog order.

Backfill orders (slot option or ``predictParams.backfillOrder``): ``popular`` (the default when an
artifact exists: most popular first), ``trending`` (highest ``trending`` first, popularity breaking
ties) and ``catalog`` (catalog order, as without an artifact).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from aisle.core.storage import BlobNotFound, BlobStore
from aisle.recs import popularity_store

BackfillOrder = Literal["popular", "trending", "catalog"]
BACKFILL_ORDERS: tuple[str, ...] = ("popular", "trending", "catalog")
POPULARITY_TTL_S = 5.0
"""Seconds between reads of the popularity pointer (a refresh is served at most this late)."""


@dataclass
class ServedPopularity:
    """One version of the artifact, ready for ranking.

    Attributes:
        version: the artifact version (0: none published).
        popularity: item -> its smoothed share of weighted events (in (0, 1)).
        trending: item -> short-window share over long-window share (1 = steady).
        ranked: ``popular`` / ``trending`` -> every item of the artifact, best first.
    """

    version: int
    popularity: dict[str, float] = field(default_factory=dict)
    trending: dict[str, float] = field(default_factory=dict)
    ranked: dict[str, list[str]] = field(default_factory=dict)
    sorted_categories: dict[tuple[Any, Any, str], list[str]] = field(default_factory=dict, repr=False)
    """(catalog version, category, order) -> that category's items by score: a cache of
    :mod:`aisle.recs.serving.backfill`, one entry per category a request backfilled from, for the
    catalog version :attr:`sorted_version` only (replaced, not grown, when the catalog changes)."""
    sorted_version: Any = field(default=None, repr=False)

    @classmethod
    def of(
        cls, version: int, items: list[str], popularity: list[float], trending: list[float]
    ) -> ServedPopularity:
        """From the artifact's ``items`` table columns."""
        pop = dict(zip(items, popularity, strict=True))
        trend = dict(zip(items, trending, strict=True))
        return cls(
            version,
            pop,
            trend,
            {
                "popular": sorted(items, key=lambda i: (-pop[i], i)),
                "trending": sorted(items, key=lambda i: (-trend[i], -pop[i], i)),
            },
        )

    def key(self, order: BackfillOrder) -> dict[str, float]:
        """The score an order sorts by, highest first (empty for ``catalog``)."""
        return self.trending if order == "trending" else self.popularity if order == "popular" else {}

    def order(self, order: BackfillOrder) -> list[str]:
        """Every item of the artifact in ``order`` (empty for ``catalog``)."""
        return self.ranked.get(order, [])


def load(scope: BlobStore, known: ServedPopularity | None) -> ServedPopularity | None:
    """The tenant's current artifact: ``known`` again when the pointer still names its version, None
    when there is none (or it cannot be read whole: the engine then ranks as without one)."""
    version = popularity_store.current_version(scope)
    if version is None:
        return None
    if known is not None and known.version == version:
        return known
    try:
        items = popularity_store.read_table(scope, version, "items")
    except BlobNotFound:
        return None
    return ServedPopularity.of(
        version, items["item_id"].to_list(), items["popularity"].to_list(), items["trending"].to_list()
    )
