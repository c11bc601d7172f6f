"""Request filters as catalog rows, for the vector layer (which masks its tables with them).

:class:`FilterRows` evaluates the search request's filters with the tenant's full-text index into the
catalog rows that pass: a :class:`~aisle.vectors.search.RowSelection`, plain rows of an index snapshot.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import orjson
import tantivy

from aisle.search.index.reader import TenantIndex
from aisle.search.model import FilterSpec
from aisle.search.query.filters import filter_clause
from aisle.vectors.search import RowSelection

FILTER_CACHE = 256


def filter_ords(index: TenantIndex, filters: Sequence[FilterSpec]) -> np.ndarray:
    """Catalog row numbers (int64, sorted) of the products passing every filter (AND across fields).

    Raises:
        BadRequest: unknown or non-filterable field, bad value (see :mod:`aisle.search.stages.filters`).
    """
    clauses = [filter_clause(index, spec)[0] for spec in filters]
    query = (
        clauses[0]
        if len(clauses) == 1
        else tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in clauses])
    )
    limit = max(1, index.num_docs())
    hits = index.searcher.search(tantivy.Query.const_score_query(query, 1.0), limit).hits
    if not hits:
        return np.zeros(0, dtype=np.int64)
    return np.sort(np.asarray(index.ords(hits), dtype=np.int64))


class FilterRows:
    """Request filters -> the catalog rows passing them, kept in an LRU of :data:`FILTER_CACHE` per
    process (shoppers repeat the same facet clicks; a broad filter over 55k products costs milliseconds).

    ``index_of`` finds a tenant's current index (the engine's :class:`~aisle.search.indexes.IndexRegistry`
    ``get``); it is needed only by the :class:`~aisle.vectors.neighbours.RowSelector` call form.
    """

    def __init__(self, index_of: Callable[[str], TenantIndex] | None = None) -> None:
        self.index_of = index_of
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, str, bytes], np.ndarray] = OrderedDict()

    def entry_count(self) -> int:
        """Filter row selections held."""
        return len(self._cache)

    def __call__(self, tenant: str, filters: Sequence[Mapping[str, Any]]) -> RowSelection:
        """The rows of ``tenant``'s current catalog passing ``filters`` (JSON filter objects)."""
        assert self.index_of is not None, "FilterRows needs index_of to be called with a tenant"
        specs = [FilterSpec.model_validate(f) for f in filters]
        return self.select(self.index_of(tenant), specs)

    def select(self, index: TenantIndex, filters: Sequence[FilterSpec]) -> RowSelection:
        """The rows of ``index`` passing ``filters``. Raises BadRequest as :func:`filter_ords` does."""
        # a followed index's snapshots share its version: the rows passing change with each of them
        slot = (
            index.tenant,
            f"{index.lineage or index.version}#{index.generation}",
            orjson.dumps([f.model_dump() for f in filters]),
        )
        with self._lock:
            ords = self._cache.get(slot)
            if ords is not None:
                self._cache.move_to_end(slot)
        if ords is None:
            ords = filter_ords(index, filters)
            with self._lock:
                self._cache[slot] = ords
                while len(self._cache) > FILTER_CACHE:
                    self._cache.popitem(last=False)
        return RowSelection(index.catalog_rows(), ords)
