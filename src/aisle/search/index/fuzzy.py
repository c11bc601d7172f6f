"""Typo expansions of query terms, computed once per index and shared by every search of it.

tantivy's ``FuzzyTermQuery`` builds a Levenshtein automaton and walks a field's term dictionary each
time a search builds its weight: the typo stage's query and the facet stage's lean query of the same
search walked it twice, and every later search with the same word again (issue 32: 14% of a 12-word
query's retrieval). :class:`FuzzyTerms` lists each field's terms once, finds the ones within the
distance (the same measure as tantivy's automaton with transpositions costing 1: the optimal string
alignment distance, over characters), and keeps the answer per ``(field, term, distance)`` in a
bounded LRU. It belongs to one opened index (:meth:`~aisle.search.index.reader.TenantIndex.fuzzy_terms`),
so a new catalog version or configuration, which opens a new index, starts with an empty cache.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np
import tantivy
from rapidfuzz import process
from rapidfuzz.distance import OSA

CACHE_SIZE = 8192
"""Expansions kept per index (``(field, term, distance)`` keys, least recently used dropped first)."""


class FuzzyTerms:
    """The terms of each field within an edit distance of a query term, for one tantivy searcher.

    Args:
        searcher: the index's searcher (its term dictionaries are listed once per field, on first use).
        size: expansions kept (LRU).
    """

    def __init__(self, searcher: tantivy.Searcher, size: int = CACHE_SIZE) -> None:
        self.searcher = searcher
        self.size = size
        self._by_length: dict[str, dict[int, list[str]]] = {}
        self._cache: OrderedDict[tuple[str, str, int], tuple[str, ...]] = OrderedDict()
        self._prefixes: OrderedDict[tuple[str, str, int], tuple[tuple[str, int], ...]] = OrderedDict()
        self._lock = threading.Lock()
        self.misses = 0

    def __len__(self) -> int:
        return len(self._cache)

    def _terms(self, field: str) -> dict[int, list[str]]:
        terms = self._by_length.get(field)
        if terms is None:
            terms = {}
            for term, _ in self.searcher.terms_with_prefix(field, ""):
                terms.setdefault(len(term), []).append(term)
            self._by_length[field] = terms
        return terms

    def expand(self, field: str, term: str, distance: int) -> tuple[str, ...]:
        """The terms of ``field`` (a tantivy text field name) at most ``distance`` edits from ``term``
        (insertions, deletions, substitutions and adjacent transpositions, each 1), ``term`` included
        when the field has it; sorted. Raises ValueError for a field that is not an indexed text field."""
        key = (field, term, distance)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        by_length = self._terms(field)
        n = len(term)
        candidates = [
            t for length in range(n - distance, n + distance + 1) for t in by_length.get(length, ())
        ]
        found: tuple[str, ...] = ()
        if candidates:
            dist = process.cdist(
                [term], candidates, scorer=OSA.distance, score_cutoff=distance, dtype=np.int32
            )
            found = tuple(sorted(candidates[i] for i in np.flatnonzero(dist[0] <= distance)))
        with self._lock:
            self.misses += 1
            self._cache[key] = found
            if len(self._cache) > self.size:
                self._cache.popitem(last=False)
        return found

    def prefixed(self, field: str, prefix: str, limit: int) -> tuple[tuple[str, int], ...]:
        """The ``limit`` terms of ``field`` that begin with ``prefix``, most documents first, with their
        document frequencies (tantivy's ``terms_with_prefix``), kept in the same LRU as the typo
        expansions. Raises ValueError for a field that is not an indexed text field."""
        key = (field, "\0prefix:" + prefix, limit)
        with self._lock:
            hit = self._prefixes.get(key)
            if hit is not None:
                self._prefixes.move_to_end(key)
                return hit
        found = tuple(
            (str(t), int(n)) for t, n in self.searcher.terms_with_prefix(field, prefix, limit=limit)
        )
        with self._lock:
            self.misses += 1
            self._prefixes[key] = found
            if len(self._prefixes) > self.size:
                self._prefixes.popitem(last=False)
        return found
