"""Synonyms from ``global_configuration.json``: two-way groups and one-way expansions.

Keys and expansions are normalised word sequences (:func:`aisle.search.normalize.normalize`), so
``t-shirt`` and ``T Shirt`` are the same key. Matching is longest-first over the query's words.
"""

from __future__ import annotations

import threading

from aisle.core.tenant_config import GlobalConfiguration
from aisle.search.normalize import normalize

MAX_SYNONYM_WORDS = 4


class SynonymTable:
    """``{normalised words: [expansions]}`` built from the tenant's synonym rules."""

    def __init__(self, config: GlobalConfiguration) -> None:
        self.entries: dict[tuple[str, ...], list[str]] = {}
        for rule in config.synonyms:
            if rule.terms is not None:
                members = [normalize(t) for t in rule.terms]
                for member in members:
                    self._add(member, [m for m in members if m != member])
            elif rule.from_ and rule.to:
                self._add(normalize(rule.from_), [normalize(t) for t in rule.to])

    def _add(self, key: str, expansions: list[str]) -> None:
        words = tuple(key.split())
        if not words or len(words) > MAX_SYNONYM_WORDS:
            return
        bucket = self.entries.setdefault(words, [])
        bucket.extend(e for e in expansions if e and e not in bucket)

    def match(self, words: list[str], start: int) -> tuple[int, list[str]]:
        """(number of words matched at ``start``, expansions); (0, []) when none."""
        for n in range(min(MAX_SYNONYM_WORDS, len(words) - start), 0, -1):
            expansions = self.entries.get(tuple(words[start : start + n]))
            if expansions:
                return n, expansions
        return 0, []


_cache: dict[int, tuple[GlobalConfiguration, SynonymTable]] = {}
_lock = threading.Lock()


def synonym_table(config: GlobalConfiguration) -> SynonymTable:
    """The table for ``config``, built once per configuration object."""
    hit = _cache.get(id(config))
    if hit is not None and hit[0] is config:
        return hit[1]
    table = SynonymTable(config)
    with _lock:
        if len(_cache) > 256:
            _cache.clear()
        _cache[id(config)] = (config, table)
    return table
