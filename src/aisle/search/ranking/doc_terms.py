"""The ranker's token table: every product's analysed searchable text as token ids, built once per index.

:mod:`aisle.search.ranking.features` reads a query's candidates' texts from it instead of analysing
them per query; it also holds what BM25 needs (document frequencies, mean length) and the unstemmed
words for the exact-match features.
"""

from __future__ import annotations

import bisect
import math
import sys
import threading
from dataclasses import dataclass

import numpy as np

from aisle.catalog.schema import PATH_SEP
from aisle.search.index.overlay import column_values
from aisle.search.index.reader import TenantIndex
from aisle.search.normalize import normalize

_BUILD_LOCK = threading.Lock()
_REMEMBERED_CHARS = 64
"""Values up to this long are analysed once per table build (a brand or colour repeats thousands of times)."""


@dataclass(frozen=True)
class DocTerms:
    """Analysed searchable text of every product of one index, as token ids.

    ``ids[ptr[o]:ptr[o + 1]]`` are product ``o``'s token ids in text order (searchable attributes in
    configuration order); ``df[t]`` is how many products hold token ``t``; ``distinct[o]`` how many
    different tokens product ``o`` holds; ``vocab`` maps a token to its id and ``words`` an id to its
    token; ``by_word`` is ``words`` in code point order and ``word_rank[t]`` token ``t``'s place in it
    (so the tokens starting with a prefix are one range of ranks); ``avg_len`` is the mean tokens per
    product. ``raw_*`` hold the same texts as normalised words before stemming
    (``raw_ids[raw_ptr[o]:raw_ptr[o + 1]]``).
    """

    vocab: dict[str, int]
    ptr: np.ndarray
    ids: np.ndarray
    df: np.ndarray
    n_docs: int
    words: list[str]
    avg_len: float
    raw_vocab: dict[str, int]
    raw_ptr: np.ndarray
    raw_ids: np.ndarray
    distinct: np.ndarray
    by_word: list[str]
    word_rank: np.ndarray

    @classmethod
    def of(cls, index: TenantIndex) -> DocTerms:
        """The index's DocTerms, built once on first use (about 3 s for Home Depot's 54,667 titles)
        and cached on it; the search service builds it at start-up for tenants with a ranker in use.
        A snapshot of a followed index with rows appended since the cached table was made extends it
        by theirs (:meth:`extended`); the snapshots of one index share the newest."""
        cached = index.derived.get("doc_terms")
        n = len(index.rows)
        if cached is None or cached.n_docs < n:
            with _BUILD_LOCK:
                cached = index.derived.get("doc_terms")
                if cached is None:
                    cached = index.derived["doc_terms"] = cls.build(index)
                elif cached.n_docs < n:
                    cached = index.derived["doc_terms"] = cached.extended(index)
        assert isinstance(cached, DocTerms)
        return cached

    @classmethod
    def build(cls, index: TenantIndex) -> DocTerms:
        n = len(index.rows)
        vocab: dict[str, int] = {}
        raw_vocab: dict[str, int] = {}
        ptr, ids, raw_ptr, raw_ids = _tokens(index, 0, n, vocab, raw_vocab)
        width = max(len(vocab), 1)
        doc_of = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr))
        pairs = np.unique(doc_of * width + ids)  # (product, token) pairs, each once
        df = np.bincount(pairs % width, minlength=len(vocab)).astype(np.int32)
        distinct = np.bincount(pairs // width, minlength=n).astype(np.int32)
        avg_len = float(len(ids)) / max(n, 1) or 1.0
        words = list(vocab)
        by_word, word_rank = _word_order(words)
        return cls(
            vocab, ptr, ids, df, n, words, avg_len, raw_vocab, raw_ptr, raw_ids, distinct, by_word, word_rank
        )

    def extended(self, index: TenantIndex) -> DocTerms:
        """This table with the rows of ``index`` past :attr:`n_docs` added (rows appended by the change
        log; the table is not changed). Their tokens count in ``df`` and the mean length; the rows they
        replace still count too (no search returns those), so BM25's statistics drift a little until
        the next catalog version is indexed whole. Costs the new rows' analysis plus a copy of the
        arrays and vocabularies."""
        start, n = self.n_docs, len(index.rows)
        vocab, raw_vocab = dict(self.vocab), dict(self.raw_vocab)
        ptr, ids, raw_ptr, raw_ids = _tokens(index, start, n, vocab, raw_vocab)
        width = max(len(vocab), 1)
        doc_of = np.repeat(np.arange(n - start, dtype=np.int64), np.diff(ptr))
        pairs = np.unique(doc_of * width + ids)
        df = np.zeros(len(vocab), dtype=np.int32)
        df[: len(self.df)] = self.df
        df += np.bincount(pairs % width, minlength=len(vocab)).astype(np.int32)
        distinct = np.concatenate(
            [self.distinct, np.bincount(pairs // width, minlength=n - start).astype(np.int32)]
        )
        all_ids = np.concatenate([self.ids, ids])
        words = self.words + list(vocab)[len(self.words) :] if len(vocab) > len(self.words) else self.words
        by_word, word_rank = (
            (self.by_word, self.word_rank) if words is self.words else self._word_order(words)
        )
        return DocTerms(
            vocab,
            np.concatenate([self.ptr, ptr[1:] + self.ptr[-1]]),
            all_ids,
            df,
            n,
            words,
            float(len(all_ids)) / max(n, 1) or 1.0,
            raw_vocab,
            np.concatenate([self.raw_ptr, raw_ptr[1:] + self.raw_ptr[-1]]),
            np.concatenate([self.raw_ids, raw_ids]),
            distinct,
            by_word,
            word_rank,
        )

    def _word_order(self, words: list[str]) -> tuple[list[str], np.ndarray]:
        """:func:`_word_order` of ``words`` (this table's words, then new ones), by inserting the new
        ones into :attr:`by_word` instead of sorting all again (20 ms on Home Depot's words: most of
        what a snapshot's new title cost)."""
        old_n = len(self.words)
        new = sorted(range(old_n, len(words)), key=words.__getitem__)
        at = np.asarray([bisect.bisect_left(self.by_word, words[t]) for t in new], dtype=np.int64)
        moved = np.arange(old_n) + np.searchsorted(at, np.arange(old_n), side="right")
        placed = at + np.arange(len(new))
        by_word = np.empty(len(words), dtype=object)
        by_word[moved] = self.by_word
        by_word[placed] = [words[t] for t in new]
        word_rank = np.empty(len(words), dtype=np.int32)
        word_rank[:old_n] = moved[self.word_rank]
        word_rank[new] = placed
        return by_word.tolist(), word_rank

    def idf(self, token_id: int) -> float:
        """BM25 idf, ``ln(1 + (N - df + 0.5) / (df + 0.5))`` (Robertson & Zaragoza 2009); unknown: df 0."""
        df = int(self.df[token_id]) if token_id >= 0 else 0
        return math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))

    def ranks_starting(self, prefix: str) -> tuple[int, int]:
        """``[lo, hi)``: the ``word_rank`` values of the tokens that start with ``prefix`` (non-empty)."""
        lo = bisect.bisect_left(self.by_word, prefix)
        last = ord(prefix[-1])
        if last < sys.maxunicode:  # in code point order they end where the next prefix of its length begins
            return lo, bisect.bisect_left(self.by_word, prefix[:-1] + chr(last + 1), lo)
        hi = lo
        while hi < len(self.by_word) and self.by_word[hi].startswith(prefix):
            hi += 1
        return lo, hi


def _tokens(
    index: TenantIndex, start: int, stop: int, vocab: dict[str, int], raw_vocab: dict[str, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows ``start:stop``'s searchable text as (ptr (rows + 1,) int64 from 0, token ids int32, raw ptr,
    raw word ids int32); new tokens and words are added to ``vocab`` and ``raw_vocab``."""
    n = stop - start
    columns = [column_values(column, start, stop) for column in index.searchable]
    ids: list[int] = []
    raw_ids: list[int] = []
    ptr = np.zeros(n + 1, dtype=np.int64)
    raw_ptr = np.zeros(n + 1, dtype=np.int64)
    seen: dict[str, tuple[list[int], list[int]]] = {}  # short values repeat: brands, colours, categories
    for o in range(n):
        for column in columns:
            value = column[o]
            if value is None or value == "":
                continue
            value = str(value)
            known = seen.get(value)
            if known is None:
                text = normalize(value.replace(PATH_SEP, " "))
                known = (
                    [vocab.setdefault(token, len(vocab)) for token in index.analyze(text)],
                    [raw_vocab.setdefault(word, len(raw_vocab)) for word in text.split()],
                )
                if len(value) <= _REMEMBERED_CHARS:
                    seen[value] = known
            ids += known[0]
            raw_ids += known[1]
        ptr[o + 1] = len(ids)
        raw_ptr[o + 1] = len(raw_ids)
    return ptr, np.asarray(ids, dtype=np.int32), raw_ptr, np.asarray(raw_ids, dtype=np.int32)


def _word_order(words: list[str]) -> tuple[list[str], np.ndarray]:
    """``words`` in code point order, and each word's place in it (int32, by token id)."""
    order = sorted(range(len(words)), key=words.__getitem__)
    word_rank = np.empty(len(words), dtype=np.int32)
    word_rank[order] = np.arange(len(words), dtype=np.int32)
    return [words[t] for t in order], word_rank
