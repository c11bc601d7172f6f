"""A word-prefix index over suggestion keys, with typo-tolerant prefix expansion, built in memory or
mapped from files written once per host (:meth:`PrefixIndex.save`, issue 42).

Layout (built once per suggestion index; candidate ids are ``0..C-1``, in ranking order per type):

- ``vocab``: the sorted distinct words of all keys. The words starting with a prefix ``p`` are one
  contiguous range ``[lo, hi)`` of it, found with two bisections.
- ``postings`` / ``offsets``: for each word, the sorted ids of the keys containing it, all words'
  lists laid end to end in vocabulary order, so the keys containing *any* word with prefix ``p`` are
  the single slice ``postings[offsets[lo]:offsets[hi]]`` (no per-word loop).
- ``heavy``: for prefixes whose slice is longer than :data:`HEAVY` (short prefixes such as "s"), the
  first :data:`HEAVY_KEEP` ids of each type, precomputed, so no request sorts a large slice. (When
  every word of a multi-word prefix is that short, e.g. "m s", matches are looked for among those
  heads only: the best-ranked keys, so the answer can only miss low-ranked ones.)
- ``words``: a ``(C, width)`` matrix of each key's word ids (-1 padded; at most :data:`MAX_WORDS`),
  to test the other words of a multi-word prefix on the candidates of the most selective word.
- ``pools``: the distinct word prefixes by (first letter, length), for typo expansion: a typed word
  within ``d`` edits (optimal string alignment, i.e. Damerau-Levenshtein with adjacent transpositions,
  rapidfuzz) of a vocabulary prefix of length ``len(word) +- d`` matches as if it were that prefix. The
  first letter is not fuzzed (as Elasticsearch's completion suggester ``prefix_length: 1``): it keeps
  the pools small and first-letter typos are rare.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from rapidfuzz import process
from rapidfuzz.distance import OSA

from aisle.core.mapped import MappedStrings, MappedTables, TableWriter

HEAVY = 2048
HEAVY_KEEP = 256
MAX_WORDS = 24
MAX_POOL_LENGTH = 16  # typo expansion of words longer than this uses their first 16 letters
FUZZY_MEMO = 50_000  # typo expansions remembered (a pure function of the word; shoppers repeat words)
IdArray = npt.NDArray[np.int32]


def _unique_sorted(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Sorted distinct values (a sort and a comparison: faster than ``np.unique`` on small arrays)."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), dtype=np.bool_)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


@dataclass(frozen=True, slots=True)
class WordMatch:
    """The vocabulary ranges one typed word matches, the prefixes behind them and their posting size."""

    prefixes: tuple[str, ...]
    ranges: tuple[tuple[int, int], ...]
    size: int


class PrefixIndex:
    """Word-prefix lookups over keys ``keys[i]`` (see the module docstring for the layout).

    Args:
        keys: normalised texts, in id order.
        type_bounds: ``[b0, b1, ..., bT]``: type ``t`` owns ids ``b_t .. b_{t+1}-1``.

    Built here, or mapped from files a process wrote (:meth:`save`, :meth:`mapped`): the same arrays
    and string tables either way (:mod:`aisle.core.mapped`), so the workers of a host share one copy.
    """

    def __init__(self, keys: Sequence[str], type_bounds: Sequence[int]) -> None:
        self.type_bounds = np.asarray(type_bounds, dtype=np.int64)
        split = [k.split()[:MAX_WORDS] for k in keys]
        vocab: list[str] = sorted({w for ws in split for w in ws})
        word_id = {w: i for i, w in enumerate(vocab)}
        lengths = np.fromiter((len(ws) for ws in split), dtype=np.int64, count=len(split))
        flat_w = np.fromiter(
            (word_id[w] for ws in split for w in ws), dtype=np.int64, count=int(lengths.sum())
        )
        del word_id
        flat_c = np.repeat(np.arange(len(split), dtype=np.int64), lengths)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if len(split) else np.zeros(0, np.int64)
        column = np.arange(len(flat_w), dtype=np.int64) - np.repeat(starts, lengths)
        self.words = np.full((len(split), max(1, int(lengths.max(initial=1)))), -1, dtype=np.int32)
        self.words[flat_c, column] = flat_w
        # One posting per (word, key): sorted by word, then key.
        pairs = _unique_sorted(flat_w * max(1, len(split)) + flat_c)
        pair_w = pairs // max(1, len(split))
        self.postings: IdArray = (pairs % max(1, len(split))).astype(np.int32)
        counts = np.bincount(pair_w, minlength=len(vocab))
        self.offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.vocab: Sequence[str] = vocab
        self.heavy: dict[str, IdArray] = self._build_heavy(vocab)
        pools = _build_pools(vocab)
        self.vocab = MappedStrings.of(vocab)  # what the mapped index holds: one layout either way
        self._pools = MappedStrings.of(p for members in pools.values() for p in members)
        self._pool_ranges = _ranges(pools)
        self._fuzzy_memo: dict[tuple[str, int], WordMatch] = {}

    @classmethod
    def mapped(cls, tables: MappedTables, name: str = "prefix") -> PrefixIndex:
        """The index :meth:`save` wrote under ``name`` into ``tables``, mapped (the heavy heads' dict of
        views and the pool ranges are the only parts built in memory)."""
        self = cls.__new__(cls)
        meta = tables.meta[name]
        self.type_bounds = np.asarray(meta["type_bounds"], dtype=np.int64)
        self.words = tables.array(f"{name}.words")
        self.postings = tables.array(f"{name}.postings")
        self.offsets = tables.array(f"{name}.offsets")
        self.vocab = tables.strings(f"{name}.vocab")
        heavy_ptr, heavy_ids = tables.array(f"{name}.heavy_ptr"), tables.array(f"{name}.heavy_ids")
        self.heavy = {
            key: heavy_ids[heavy_ptr[i] : heavy_ptr[i + 1]]
            for i, key in enumerate(tables.strings(f"{name}.heavy_keys"))
        }
        self._pools = tables.strings(f"{name}.pools")
        self._pool_ranges = {(k[0], int(k[1:])): (lo, hi) for k, (lo, hi) in meta["pools"].items()}
        self._fuzzy_memo = {}
        return self

    def save(self, writer: TableWriter, name: str = "prefix") -> None:
        """Write this index under ``name`` (what :meth:`mapped` reads)."""
        keys = sorted(self.heavy)
        heavy_ptr = np.zeros(len(keys) + 1, dtype=np.int64)
        heavy_ptr[1:] = np.cumsum([len(self.heavy[k]) for k in keys], dtype=np.int64)
        parts = [self.heavy[k] for k in keys]
        writer.array(f"{name}.words", self.words)
        writer.array(f"{name}.postings", self.postings)
        writer.array(f"{name}.offsets", self.offsets)
        writer.strings(f"{name}.vocab", self.vocab)
        writer.strings(f"{name}.heavy_keys", keys)
        writer.array(f"{name}.heavy_ptr", heavy_ptr)
        writer.array(f"{name}.heavy_ids", np.concatenate(parts) if parts else np.zeros(0, np.int32))
        writer.strings(f"{name}.pools", self._pools)
        writer.meta[name] = {
            "type_bounds": self.type_bounds.tolist(),
            "pools": {f"{k[0]}{k[1]}": list(v) for k, v in self._pool_ranges.items()},
        }

    # -- build ---------------------------------------------------------------------------------

    def _top_per_type(self, ids: IdArray, keep: int) -> IdArray:
        """The first ``keep`` ids of each type of the sorted ``ids``."""
        cuts = np.searchsorted(ids, self.type_bounds)
        parts = [ids[cuts[t] : min(cuts[t + 1], cuts[t] + keep)] for t in range(len(cuts) - 1)]
        return np.concatenate(parts) if parts else ids

    def _build_heavy(self, vocab: list[str]) -> dict[str, IdArray]:
        heavy: dict[str, IdArray] = {}
        # Breadth first: only the children of a heavy prefix can be heavy.
        frontier = [""]
        while frontier:
            nxt = []
            for parent in frontier:
                lo, hi = self.range(parent)
                depth = len(parent)
                children = sorted({w[depth] for w in vocab[lo:hi] if len(w) > depth})
                for ch in children:
                    prefix = parent + ch
                    clo, chi = self.range(prefix, lo, hi)
                    if self.offsets[chi] - self.offsets[clo] > HEAVY:
                        ids = _unique_sorted(self.postings[self.offsets[clo] : self.offsets[chi]])
                        heavy[prefix] = self._top_per_type(ids, HEAVY_KEEP)
                        nxt.append(prefix)
            frontier = nxt
        return heavy

    def pool(self, letter: str, length: int) -> list[str]:
        """The distinct word prefixes of ``length`` letters starting with ``letter``, sorted."""
        found = self._pool_ranges.get((letter, length))
        return self._pools[found[0] : found[1]] if found else []

    # -- lookups -------------------------------------------------------------------------------

    def range(self, prefix: str, lo: int = 0, hi: int | None = None) -> tuple[int, int]:
        """The vocabulary ids ``[lo, hi)`` of the words starting with ``prefix``."""
        hi = len(self.vocab) if hi is None else hi
        start = bisect_left(self.vocab, prefix, lo, hi)
        end = bisect_left(self.vocab, prefix + "\U0010ffff", start, hi)
        return start, end

    def exact(self, word: str) -> WordMatch:
        """The words with prefix ``word``."""
        lo, hi = self.range(word)
        return WordMatch((word,), ((lo, hi),), int(self.offsets[hi] - self.offsets[lo]))

    def fuzzy(self, word: str, distance: int) -> WordMatch:
        """Words with a prefix within ``distance`` edits of ``word`` (same first letter), or with prefix
        ``word`` itself. Cost: one rapidfuzz scan of the pools of lengths ``len(word) +- distance``
        (0.1-0.7 ms on Home Depot's 20,000 words), memoised per word."""
        memo = self._fuzzy_memo.get((word, distance))
        if memo is None:
            if len(self._fuzzy_memo) >= FUZZY_MEMO:
                self._fuzzy_memo.clear()
            memo = self._fuzzy_memo[(word, distance)] = self._fuzzy(word, distance)
        return memo

    def _fuzzy(self, word: str, distance: int) -> WordMatch:
        word = word[:MAX_POOL_LENGTH]
        prefixes = {word}
        for n in range(max(2, len(word) - distance), len(word) + distance + 1):
            pool = self.pool(word[0], n)
            if pool:
                for match, _, _ in process.extract(
                    word, pool, scorer=OSA.distance, score_cutoff=distance, limit=None
                ):
                    prefixes.add(match)
        # A prefix inside another's range adds nothing: keep the shortest of nested prefixes.
        kept: list[str] = []
        for p in sorted(prefixes):
            if not kept or not p.startswith(kept[-1]):
                kept.append(p)
        ranges = tuple(self.range(p) for p in kept)
        size = int(sum(self.offsets[hi] - self.offsets[lo] for lo, hi in ranges))
        return WordMatch(tuple(kept), ranges, size)

    def ids(self, match: WordMatch) -> IdArray:
        """Sorted ids of the keys with a word in ``match`` (heavy prefixes: their precomputed heads)."""
        parts = []
        for prefix, (lo, hi) in zip(match.prefixes, match.ranges, strict=True):
            if hi <= lo:
                continue
            head = self.heavy.get(prefix)
            parts.append(head if head is not None else self.postings[self.offsets[lo] : self.offsets[hi]])
        if not parts:
            return np.empty(0, dtype=np.int32)
        if len(parts) == 1 and match.prefixes[0] in self.heavy:
            return parts[0]
        return _unique_sorted(np.concatenate(parts))

    def word_mask(self, match: WordMatch) -> npt.NDArray[np.bool_]:
        """A boolean per vocabulary word (plus a final False for the -1 padding): in ``match``?"""
        mask = np.zeros(len(self.vocab) + 1, dtype=np.bool_)
        for lo, hi in match.ranges:
            mask[lo:hi] = True
        return mask

    def search(self, matches: Sequence[WordMatch]) -> tuple[IdArray, npt.NDArray[np.bool_]]:
        """Ids (sorted) of the keys matching every typed word, and whether their first word matches
        the first typed word. Starts from the most selective word, filters by the others."""
        if not matches or any(m.size == 0 for m in matches):
            return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.bool_)
        base = min(range(len(matches)), key=lambda i: matches[i].size)
        ids = self.ids(matches[base])
        rows = self.words[ids]  # gathered once, narrowed with ``ids``
        for i, m in enumerate(matches):
            if i != base and len(ids):
                keep = self.word_mask(m)[rows].any(axis=1)
                ids, rows = ids[keep], rows[keep]
        first = self.word_mask(matches[0])[rows[:, 0]]
        return ids, first


def _build_pools(vocab: list[str]) -> dict[tuple[str, int], list[str]]:
    """The distinct prefixes of 2 to :data:`MAX_POOL_LENGTH` letters of ``vocab``'s words, by (first
    letter, length), each pool sorted; the pools in key order."""
    seen: set[str] = set()
    for w in vocab:
        for n in range(2, min(len(w), MAX_POOL_LENGTH) + 1):
            seen.add(w[:n])
    pools: dict[tuple[str, int], list[str]] = {}
    for p in sorted(seen):
        pools.setdefault((p[0], len(p)), []).append(p)
    return dict(sorted(pools.items()))


def _ranges(pools: dict[tuple[str, int], list[str]]) -> dict[tuple[str, int], tuple[int, int]]:
    """Each pool's ``[start, end)`` when the pools are laid end to end in ``pools``' order."""
    ranges, start = {}, 0
    for key, members in pools.items():
        ranges[key] = (start, start + len(members))
        start += len(members)
    return ranges
