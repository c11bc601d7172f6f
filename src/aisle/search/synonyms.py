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


class SynonymTables:
    """Each tenant configuration's :class:`SynonymTable`, built once per configuration object.

    Owned by the query-understanding stage of one pipeline (no module-level cache); thread-safe. A
    configuration is looked up by identity: a reloaded configuration is a new object, so a changed
    synonym list takes effect with it. Past :attr:`MAX_TABLES` tables, all are dropped (built again
    as needed).
    """

    MAX_TABLES = 256

    def __init__(self) -> None:
        self._tables: dict[int, tuple[GlobalConfiguration, SynonymTable]] = {}
        self._lock = threading.Lock()

    def table(self, config: GlobalConfiguration) -> SynonymTable:
        """The table for ``config`` (built on first use: microseconds per rule)."""
        hit = self._tables.get(id(config))
        if hit is not None and hit[0] is config:
            return hit[1]
        table = SynonymTable(config)
        with self._lock:
            if len(self._tables) > self.MAX_TABLES:
                self._tables.clear()
            self._tables[id(config)] = (config, table)
        return table
