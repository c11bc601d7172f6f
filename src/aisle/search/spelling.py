"""Spelling correction against the tenant's own vocabulary (its catalog, weighted by its query log).

A query word the catalog knows is never corrected. An unknown word of at least
``min_length_one_typo`` letters is matched to the catalog word at the smallest optimal string
alignment distance (Damerau-Levenshtein with adjacent transpositions; rapidfuzz's ``OSA``), at most
1 edit for short words and 2 from ``min_length_two_typos`` letters; ties go to the more frequent
word (Norvig, "How to write a spelling corrector", 2007: P(candidate) by corpus frequency).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import polars as pl
from rapidfuzz import process
from rapidfuzz.distance import OSA

from aisle.core.tenant_config import TypoConfig

WORD_PATTERN = r"[a-z][a-z0-9]*"


def add_query_log(vocabulary: dict[str, int], queries: pl.DataFrame) -> dict[str, int]:
    """Raise the frequency of catalog words by how often shoppers typed them (``query``, ``count``).

    Only words the catalog already knows gain: a misspelling common in the log never becomes a
    correction target, it only breaks ties between catalog words in favour of what people search.
    """
    if queries.height == 0:
        return vocabulary
    words = (
        queries.select(pl.col("query").str.to_lowercase().str.extract_all(WORD_PATTERN).alias("w"), "count")
        .explode("w")
        .drop_nulls("w")
        .group_by("w")
        .agg(pl.col("count").sum())
    )
    merged = dict(vocabulary)
    for word, count in words.iter_rows():
        if word in merged:
            merged[word] += int(count)
    return merged


def catalog_vocabulary(texts: Iterable[pl.Series]) -> dict[str, int]:
    """Word -> number of occurrences, over lowercased ASCII-folded words of the given text columns."""
    frames = []
    for series in texts:
        words = series.drop_nulls().str.to_lowercase().str.extract_all(WORD_PATTERN).explode().drop_nulls()
        frames.append(words.rename("w").to_frame())
    if not frames:
        return {}
    counts = pl.concat(frames).group_by("w").len()
    return dict(zip(counts["w"].to_list(), counts["len"].to_list(), strict=True))


def typo_distance(word: str, typo: TypoConfig) -> int:
    """The typo rule: how many edits (0, 1 or 2) ``word`` may be corrected or fuzzily expanded by.

    The one rule for spelling correction (:meth:`SpellingCorrector.candidates`) and the typo stage's
    fuzzy expansion (:mod:`aisle.search.stages.retrieve`): only a word made of letters alone is
    tolerated (a model number such as "x2000", a size, a phrase "men s" is matched as typed), 1 edit
    from ``typo.min_length_one_typo`` letters, 2 from ``typo.min_length_two_typos``; 0 when
    ``typo.enabled`` is false.
    """
    if not typo.enabled or not word.isalpha():
        return 0
    if len(word) >= typo.min_length_two_typos:
        return 2
    if len(word) >= typo.min_length_one_typo:
        return 1
    return 0


class SpellingCorrector:
    """Corrects unknown words to catalog words (see the module docstring)."""

    def __init__(self, vocabulary: dict[str, int]) -> None:
        self.vocabulary = vocabulary
        self.words = list(vocabulary)
        # words by length: a word k edits away differs in length by at most k, so only those lengths
        # are compared (half the CPU of comparing the whole vocabulary on Home Depot's misspellings)
        self._by_length: dict[int, list[str]] = {}
        for word in self.words:
            self._by_length.setdefault(len(word), []).append(word)

    def known(self, word: str) -> bool:
        return word in self.vocabulary

    def frequency(self, word: str) -> int:
        """How often ``word`` occurs in the catalog's searchable text (0 when unknown)."""
        return self.vocabulary.get(word, 0)

    def candidates(self, word: str, typo: TypoConfig | None = None, limit: int = 5) -> list[tuple[str, int]]:
        """Catalog words nearest to an unknown ``word``: [(word, distance)], nearest then most frequent."""
        if word in self.vocabulary:
            return []
        max_edits = typo_distance(word, typo or TypoConfig())
        if max_edits == 0 or not self.words:
            return []
        matches = []
        for length in range(len(word) - max_edits, len(word) + max_edits + 1):
            same_length = self._by_length.get(length)
            if same_length:
                matches += process.extract(
                    word, same_length, scorer=OSA.distance, score_cutoff=max_edits, limit=None
                )
        ranked = sorted(matches, key=lambda m: (m[1], -self.vocabulary[m[0]], m[0]))
        return [(str(m[0]), int(m[1])) for m in ranked[:limit]]

    def suggest(self, word: str, typo: TypoConfig | None = None) -> tuple[str, int] | None:
        """(best catalog word, edit distance) for an unknown ``word``; None for a known, short or far word."""
        found = self.candidates(word, typo, limit=1)
        return found[0] if found else None

    def correct(self, word: str, typo: TypoConfig | None = None) -> str | None:
        """The best catalog word for an unknown ``word``, or None (known word, too short, nothing close)."""
        found = self.suggest(word, typo)
        return found[0] if found else None

    def split(self, word: str, min_part: int = 3, min_count: int = 3) -> tuple[str, str] | None:
        """Two catalog words whose concatenation is ``word`` ("rainbarrel" → rain, barrel), the pair with
        the most frequent rarer part; None when no split has both parts known ``min_count`` times."""
        best: tuple[int, tuple[str, str]] | None = None
        for cut in range(min_part, len(word) - min_part + 1):
            left, right = word[:cut], word[cut:]
            score = min(self.vocabulary.get(left, 0), self.vocabulary.get(right, 0))
            if score >= min_count and (best is None or score > best[0]):
                best = (score, (left, right))
        return best[1] if best else None


class GrownSpeller(SpellingCorrector):
    """A speller that also knows ``words`` (word -> occurrences) added since ``base`` was made: the
    words of products written through the change log (:mod:`aisle.search.index.live`), so a new
    product's own word is not "corrected" into another. Corrections still go only to ``base``'s words
    (the next catalog version's speller has them all); made in O(1) (``base``'s tables are shared)."""

    def __init__(self, base: SpellingCorrector, words: dict[str, int]) -> None:
        self.base = base
        self.vocabulary = base.vocabulary
        self.words = base.words
        self._by_length = base._by_length
        self.added = words

    def known(self, word: str) -> bool:
        return word in self.added or self.base.known(word)

    def frequency(self, word: str) -> int:
        return self.base.frequency(word) + self.added.get(word, 0)

    def candidates(self, word: str, typo: TypoConfig | None = None, limit: int = 5) -> list[tuple[str, int]]:
        return [] if word in self.added else self.base.candidates(word, typo, limit)


def text_words(text: str) -> list[str]:
    """The speller's words of ``text``: lowercased, as :func:`catalog_vocabulary` reads them."""
    return re.findall(WORD_PATTERN, text.lower())
