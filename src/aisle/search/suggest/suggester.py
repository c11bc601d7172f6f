"""Ranked suggestions for a typed prefix, from one tenant's precomputed candidates.

Ranking (``autocomplete_configuration.json``): a candidate's score is its type's ``boost`` times its
popularity on a log scale within its type (:func:`ranking_scores`), halved when the first typed word
does not match the candidate's first word (:data:`NON_FIRST_WORD_WEIGHT`: "nik" ranks "Nike ..."
above "... Nike ..."). Every typed word must be a prefix of a word of the candidate ("run sho" finds
"running shoes"). Exact prefix matches come first; when they give fewer than
:data:`TYPO_THRESHOLD` and ``typo_tolerance`` is on, typo matches fill the free places (after every
exact match; edit distances from the tenant's ``stages.typo``: 1 from 4 letters, 2 from 8). Each
type gives at most its ``limit``; the list holds at most ``max_suggestions`` (or the request's
smaller ``limit``).
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from aisle.core.mapped import MappedStrings, MappedTables, write_tables
from aisle.core.tenancy import TenantConfig
from aisle.core.tenant_config import AutocompleteConfiguration, TypoConfig
from aisle.search.index.reader import TenantIndex
from aisle.search.normalize import normalize
from aisle.search.suggest.candidates import (
    TYPE_ORDER,
    Candidate,
    SuggestionType,
    catalog_candidates,
    checked,
    deduplicate,
    query_candidates,
)
from aisle.search.suggest.prefix_index import PrefixIndex, WordMatch

NON_FIRST_WORD_WEIGHT = 0.5
MAX_TYPED_WORDS = 8
RESCORE_FACTOR = 4
# Typo matches are looked for when exact prefixes give fewer suggestions than this (Typesense's
# ``typo_tokens_threshold``, there 1): a prefix that already completes well is not diluted with
# near-misses, and most requests skip the fuzzy scan.
TYPO_THRESHOLD = 3  # per type, the best ``limit * 4`` by base score are re-scored with the word weight


def enabled_types(autocomplete: AutocompleteConfiguration) -> set[SuggestionType]:
    """The suggestion types with ``enabled`` and a ``limit`` above 0."""
    return {t for t, c in autocomplete.types.items() if c.enabled and c.limit > 0}


@dataclass(frozen=True, slots=True)
class Suggestion:
    """One suggestion as the spec's response item: ``{suggestion, type}``."""

    suggestion: str
    type: SuggestionType


def ranking_scores(ordered: list[Candidate], autocomplete: AutocompleteConfiguration) -> np.ndarray:
    """``boost * log(1 + popularity) / log(1 + the type's largest popularity)`` per candidate.

    Popularities are counted in different units per type (searches, products); the log scale to 0..1
    within each type makes them comparable, so the configured boosts decide between types.
    """
    pops = np.asarray([c.popularity for c in ordered], dtype=np.float64)
    scores = np.zeros(len(ordered), dtype=np.float64)
    kinds = np.asarray([TYPE_ORDER.index(c.type) for c in ordered], dtype=np.int64)
    for t, kind in enumerate(TYPE_ORDER):
        sel = kinds == t
        if not sel.any():
            continue
        cfg = autocomplete.types.get(kind)
        boost = cfg.boost if cfg is not None else 1.0
        top = np.log1p(pops[sel].max())
        scores[sel] = boost * (np.log1p(pops[sel]) / top if top > 0 else 1.0)
    return scores


class Suggester:
    """The suggestion index of one tenant's catalog version, query log and autocomplete settings.

    Build with :meth:`build`; :meth:`suggest` only reads, so one instance serves all threads.
    """

    def __init__(
        self,
        candidates: list[Candidate],
        autocomplete: AutocompleteConfiguration,
        typo: TypoConfig,
        build_seconds: float = 0.0,
    ) -> None:
        self.autocomplete = autocomplete
        self.typo = typo
        rank = {t: i for i, t in enumerate(TYPE_ORDER)}
        ordered = sorted(candidates, key=lambda c: (rank[c.type], -c.popularity, -c.hits, len(c.key), c.key))
        self.texts: Sequence[str] = MappedStrings.of(c.text for c in ordered)
        self.scores = ranking_scores(ordered, autocomplete)
        bounds = [0]
        for t in TYPE_ORDER:
            bounds.append(bounds[-1] + sum(1 for c in ordered if c.type == t))
        self.bounds = bounds
        self.index = PrefixIndex([c.key for c in ordered], bounds)
        self.build_seconds = build_seconds

    def save(self, dest: Path) -> None:
        """Write this suggester's tables into directory ``dest`` (what :meth:`mapped` reads), at once or
        not at all (:func:`~aisle.core.mapped.write_tables`). Raises OSError (disk full, read-only)."""
        with write_tables(dest) as writer:
            writer.strings("texts", self.texts)
            writer.array("scores", self.scores)
            self.index.save(writer)
            writer.meta["bounds"] = self.bounds
            writer.meta["build_seconds"] = self.build_seconds

    @classmethod
    def mapped(
        cls, dest: Path, autocomplete: AutocompleteConfiguration, typo: TypoConfig
    ) -> Suggester | None:
        """The suggester :meth:`save` wrote into ``dest``, its tables mapped read-only (shared by the
        processes of a host); None when ``dest`` holds no finished one. ``autocomplete`` and ``typo``
        must be the settings it was built with (its scores depend on the types' boosts).
        Raises OSError (unreadable files)."""
        tables = MappedTables.open(dest)
        if tables is None:
            return None
        self = cls.__new__(cls)
        self.autocomplete, self.typo = autocomplete, typo
        self.texts = tables.strings("texts")
        self.scores = tables.array("scores")
        self.bounds = list(tables.meta["bounds"])
        self.index = PrefixIndex.mapped(tables)
        self.build_seconds = float(tables.meta["build_seconds"])
        return self

    def type_of(self, cid: int) -> SuggestionType:
        """The type of candidate ``cid`` (types own consecutive id ranges, in :data:`TYPE_ORDER`)."""
        return TYPE_ORDER[bisect_right(self.bounds, cid) - 1]

    @classmethod
    def build(
        cls, index: TenantIndex, config: TenantConfig, log: pl.DataFrame, products: pl.DataFrame
    ) -> Suggester:
        """Collect, check and index the candidates of enabled types (seconds on 50,000 products)."""
        start = time.perf_counter()
        enabled = enabled_types(config.autocomplete)
        stop = config.global_.stop_words
        found = catalog_candidates(index, products, enabled, stop)
        if "query" in enabled:
            found += checked(index, query_candidates(log), stop)
        return cls(
            deduplicate(found), config.autocomplete, config.global_.stages.typo, time.perf_counter() - start
        )

    def __len__(self) -> int:
        return len(self.texts)

    def count(self, kind: SuggestionType) -> int:
        """Candidates of one type."""
        t = TYPE_ORDER.index(kind)
        return self.bounds[t + 1] - self.bounds[t]

    def _distance(self, word: str) -> int:
        if not self.typo.enabled or not word.isalpha():
            return 0
        if len(word) >= self.typo.min_length_two_typos:
            return 2
        return 1 if len(word) >= self.typo.min_length_one_typo else 0

    def _pick(
        self,
        matches: list[WordMatch],
        quota: dict[int, int],
        exclude: set[int],
        tier: int,
    ) -> list[tuple[int, float, int, int]]:
        """Best ids per type within ``quota``: (tier, -score, type, id) tuples, ``quota`` decremented."""
        ids, first = self.index.search(matches)
        picked: list[tuple[int, float, int, int]] = []
        if not len(ids):
            return picked
        cuts = np.searchsorted(ids, self.bounds)
        for t, room in quota.items():
            if room <= 0:
                continue
            lo, hi = int(cuts[t]), int(cuts[t + 1])
            head = ids[lo : min(hi, lo + room * RESCORE_FACTOR + len(exclude))]
            weight = np.where(first[lo : lo + len(head)], 1.0, NON_FIRST_WORD_WEIGHT)
            scores = self.scores[head] * weight
            order = np.argsort(-scores, kind="stable")
            taken = 0
            for j in order:
                cid = int(head[j])
                if cid in exclude:
                    continue
                picked.append((tier, -float(scores[j]), t, cid))
                exclude.add(cid)
                taken += 1
                if taken == room:
                    break
            quota[t] = room - taken
        return picked

    def suggest(self, text: str, limit: int | None = None) -> list[Suggestion]:
        """Ranked suggestions for the typed ``text`` (see the module docstring for the ranking).

        ``limit`` lowers ``max_suggestions`` for this request. A text shorter than
        ``min_prefix_length`` letters (after normalisation) gets no suggestions. About 0.1-1 ms.
        """
        ac = self.autocomplete
        key = normalize(text)
        if len(key.replace(" ", "")) < ac.min_prefix_length or not self.texts:
            return []
        words = key.split()[:MAX_TYPED_WORDS]
        wanted = min(limit or ac.max_suggestions, ac.max_suggestions)
        quota = {
            TYPE_ORDER.index(t): c.limit
            for t, c in ac.types.items()
            if c.enabled and c.limit > 0 and t in TYPE_ORDER
        }
        seen: set[int] = set()
        picked = self._pick([self.index.exact(w) for w in words], quota, seen, 0)
        if (
            len(picked) < min(wanted, TYPO_THRESHOLD)
            and ac.typo_tolerance
            and any(map(self._distance, words))
        ):
            fuzzy = [
                self.index.fuzzy(w, d) if (d := self._distance(w)) else self.index.exact(w) for w in words
            ]
            picked += self._pick(fuzzy, quota, seen, 1)
        picked.sort()
        return [Suggestion(self.texts[cid], self.type_of(cid)) for _, _, _, cid in picked[:wanted]]
