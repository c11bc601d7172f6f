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
from aisle.search.index.reader import TenantIndex
from aisle.search.normalize import normalize

_BUILD_LOCK = threading.Lock()


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
        and cached on it; the search service builds it at start-up for tenants with a ranker in use."""
        cached = index.derived.get("doc_terms")
        if cached is None:
            with _BUILD_LOCK:
                cached = index.derived.get("doc_terms")
                if cached is None:
                    cached = index.derived["doc_terms"] = cls.build(index)
        assert isinstance(cached, DocTerms)
        return cached

    @classmethod
    def build(cls, index: TenantIndex) -> DocTerms:
        n = len(index.rows)
        columns = [series.to_list() for series in index.searchable]
        vocab: dict[str, int] = {}
        raw_vocab: dict[str, int] = {}
        ids: list[int] = []
        raw_ids: list[int] = []
        ptr = np.zeros(n + 1, dtype=np.int64)
        raw_ptr = np.zeros(n + 1, dtype=np.int64)
        for o in range(n):
            for column in columns:
                value = column[o]
                if value is None or value == "":
                    continue
                text = normalize(str(value).replace(PATH_SEP, " "))
                for token in index.analyze(text):
                    ids.append(vocab.setdefault(token, len(vocab)))
                for word in text.split():
                    raw_ids.append(raw_vocab.setdefault(word, len(raw_vocab)))
            ptr[o + 1] = len(ids)
            raw_ptr[o + 1] = len(raw_ids)
        id_arr = np.asarray(ids, dtype=np.int32)
        width = max(len(vocab), 1)
        doc_of = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr))
        pairs = np.unique(doc_of * width + id_arr)  # (product, token) pairs, each once
        df = np.bincount(pairs % width, minlength=len(vocab)).astype(np.int32)
        distinct = np.bincount(pairs // width, minlength=n).astype(np.int32)
        avg_len = float(len(id_arr)) / max(n, 1) or 1.0
        raw = np.asarray(raw_ids, dtype=np.int32)
        words = list(vocab)
        order = sorted(range(len(words)), key=words.__getitem__)
        word_rank = np.empty(len(words), dtype=np.int32)
        word_rank[order] = np.arange(len(words), dtype=np.int32)
        by_word = [words[t] for t in order]
        return cls(
            vocab, ptr, id_arr, df, n, words, avg_len, raw_vocab, raw_ptr, raw, distinct, by_word, word_rank
        )

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
