"""Similar items of a product the SIMILAR_ITEMS model was not trained on (cold start, issue 41).

A product written through the product API after the model was trained is unknown to it: the model
answers nothing for it. Its text vector, though, is embedded within seconds of the write by the vector
service (:mod:`aisle.vectors.catalog_follow`) into the tenant's vector write log, which every
:class:`~aisle.vectors.store.VectorStore` applies to its table. So the predict engine answers such a
seed from the tenant's text vectors instead: the nearest products to the seed's own vector (cosine),
filtered as the model's neighbours are (the request's FILTER actions, stock, deleted products).

:class:`ColdStartSimilar` wraps the model for one request whose seeds it does not all know (the engine
wraps it only then): known seeds go to the model, unknown ones to :class:`VectorNeighbours`, and an item
found both ways keeps its best score. A tenant without vectors, or a seed without a vector yet,
contributes nothing (the slot's backfill then fills the list, as before).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from aisle.core.errors import AisleError
from aisle.recs.models.base import ModelType, RecContext, Recommender, Scored
from aisle.vectors.store import VectorIndexMissing, VectorStore

log = logging.getLogger("aisle.predict")

MAX_FETCH = 1000
"""Most neighbours fetched for one seed while the request's filter rejects them (the ANN's ``k`` bound)."""


class VectorNeighbours:
    """Nearest products of a product by the tenant's text vectors (see the module docstring).

    Args:
        store: the tenant's vector tables (downloaded from the bucket on first use, their write log
            applied every ``check_every`` seconds).
    """

    def __init__(self, store: VectorStore) -> None:
        self.store = store

    def similar(
        self, tenant: str, product_id: str, k: int, allowed: Callable[[str], bool] | None = None
    ) -> list[Scored]:
        """Up to ``k`` products nearest to ``product_id``'s text vector, nearest first, scores the cosine
        (-1..1), only those ``allowed`` passes, never the product itself. Empty when the tenant has no
        text table or the product no vector; a bucket failure is logged and answers empty (the
        request is then served by the slot's backfill rather than failed)."""
        try:
            table = self.store.table(tenant, "text")
        except VectorIndexMissing:
            return []
        except AisleError as exc:
            log.warning("cold-start neighbours of %s in %s skipped: %s", product_id, tenant, exc.message)
            return []
        key = table.key_of.get(product_id)
        if key is None:
            return []
        vector = table.ann.vectors_of(np.asarray([key], dtype=np.int64))[0]
        fetch = min(max(4 * k, 20), MAX_FETCH)
        while True:
            ids, scores = self.store.search(tenant, vector, fetch + 1)
            out = [
                Scored(pid, float(score))
                for pid, score in zip(ids, scores, strict=True)
                if pid != product_id and (allowed is None or allowed(pid))
            ]
            if len(out) >= k or fetch >= min(MAX_FETCH, len(table)):
                return out[:k]
            fetch = min(fetch * 4, MAX_FETCH)


def unknown_seeds(recommender: Recommender, seeds: list[str] | tuple[str, ...]) -> list[str]:
    """The seeds a SIMILAR_ITEMS model was not trained on (none for a model that does not say which
    items it knows: one without an ``index`` mapping)."""
    index = getattr(recommender, "index", None)
    if not isinstance(index, Mapping):
        return []
    return [s for s in seeds if s not in index]


class ColdStartSimilar:
    """A SIMILAR_ITEMS model whose unknown seeds are answered from the tenant's vectors."""

    model_type = ModelType.SIMILAR_ITEMS

    def __init__(self, model: Any, tenant: str, vectors: VectorNeighbours) -> None:
        self.model = model
        self.index = model.index
        self.tenant = tenant
        self.vectors = vectors

    def recommend(self, ctx: RecContext) -> list[Scored]:
        """As the model's ``recommend``; seeds it does not know get their vector neighbours."""
        cold = unknown_seeds(self.model, list(ctx.seeds))
        if not cold:
            return self.model.recommend(ctx)  # type: ignore[no-any-return]
        exclude = set(ctx.seeds) | ctx.exclude

        def allowed(item: str) -> bool:
            return item not in exclude and (ctx.allowed is None or ctx.allowed(item))

        best: dict[str, float] = {}
        known = [s for s in ctx.seeds if s not in cold]
        if known:
            for s in self.model.recommend(replace(ctx, seeds=known, exclude=frozenset(exclude))):
                best[s.item_id] = max(best.get(s.item_id, -np.inf), s.score)
        for seed in dict.fromkeys(cold):
            for s in self.vectors.similar(self.tenant, seed, ctx.k, allowed):
                best[s.item_id] = max(best.get(s.item_id, -np.inf), s.score)
        return [Scored(i, s) for i, s in sorted(best.items(), key=lambda kv: -kv[1])[: ctx.k]]
