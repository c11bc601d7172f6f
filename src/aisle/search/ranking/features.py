"""Query-product features for the learned ranker, computed over the candidates of one text query.

A learning-to-rank stage (Liu, "Learning to Rank for Information Retrieval", 2009) reorders the
candidates the lexical and vector stages found using signals neither orders by alone: how much of the
query a product's text covers (weighted by inverse document frequency, so missing a rare word costs
more than missing a common one), whether the query's words appear together and in order, where the
first one appears, and how the BM25 and MiniLM scores compare with the best of the same query.

Every feature is relative to the query or the catalog, never to one catalog's ids, so a model trained
on one set of queries applies to new ones. :data:`FEATURES` names the columns of
:func:`candidate_features`; a model stores the names it was trained on.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np

from aisle.catalog.schema import PATH_SEP
from aisle.search.context import Candidates, SearchContext
from aisle.search.index.reader import TenantIndex
from aisle.search.normalize import normalize

FEATURES: tuple[str, ...] = (
    "terms",  # query term groups (after stop words)
    "stage",  # lexical stage that answered: 0 strict, 1 relaxed, 2 typo, 3 other
    "lexical_candidates",  # how many candidates the lexical stage gave
    "lexical",  # score of the lexical stage (NaN: found by vector search only)
    "lexical_rel",  # lexical score / best lexical score of the query
    "lexical_rank",  # 0-based rank in the lexical list (NaN: not a lexical candidate)
    "cosine",  # MiniLM cosine of query and product (NaN: no vector)
    "cosine_gap",  # best cosine among the candidates minus this one
    "cosine_rank",  # 0-based rank by cosine among the candidates
    "cosine_z",  # (cosine - mean) / standard deviation over the candidates
    "centroid",  # cosine to the mean embedding of the first CENTROID_OF lexical candidates
    "coverage",  # share of the query's term groups the product's text holds exactly
    "coverage_idf",  # the same, each group weighted by its BM25 idf
    "coverage_gap",  # best coverage_idf among the candidates minus this one
    "missing_idf",  # largest idf of a group the product lacks (0 when it has all)
    "prefix_coverage",  # share of groups held exactly or as a prefix of a word (or a word as their prefix)
    "bm25",  # BM25 of the query's groups over the product's text (k1 1.2, b 0.75)
    "bm25_rel",  # bm25 / best bm25 among the candidates
    "exact_coverage",  # share of the query's words found unstemmed ("edging" is not "edge")
    "exact_last",  # 1 when the query's last word is found unstemmed
    "first_term",  # 1 when the query's first group matches
    "last_term",  # 1 when the query's last group (often the head noun) matches
    "last_position",  # position of the last group's match / tokens of the product text
    "first_token",  # 1 when the text's first word (often the brand) is a query word
    "in_order",  # share of adjacent group pairs found next to each other, in query order
    "span",  # (last - first matched position + 1) / tokens of the product text
    "first_position",  # position of the first matched token / tokens of the product text
    "doc_tokens",  # tokens of the product's searchable text
    "doc_covered",  # share of the text's distinct words that are query words
    "numbers",  # share of numeric groups matched (NaN: the query has no number)
)
#: the features computed from the product's text, in the order :func:`candidate_features` fills them
TEXT_FEATURES: tuple[str, ...] = (
    "exact_coverage",
    "exact_last",
    "coverage",
    "coverage_idf",
    "missing_idf",
    "prefix_coverage",
    "bm25",
    "first_term",
    "last_term",
    "last_position",
    "first_token",
    "in_order",
    "span",
    "first_position",
    "doc_tokens",
    "doc_covered",
    "numbers",
)
STAGE_CODES = {"strict": 0, "relaxed": 1, "typo": 2}
CENTROID_OF = 5  # pseudo-relevance feedback: the top lexical hits as a second query (Rocchio 1971)
K1, B = 1.2, 0.75  # BM25 constants (Robertson & Zaragoza 2009)
_BUILD_LOCK = threading.Lock()


@dataclass(frozen=True)
class DocTerms:
    """Analysed searchable text of every product of one index, as token ids.

    ``ids[ptr[o]:ptr[o + 1]]`` are product ``o``'s token ids in text order (searchable attributes in
    configuration order); ``df[t]`` is how many products hold token ``t``; ``vocab`` maps a token to its id
    and ``words`` an id to its token; ``avg_len`` is the mean tokens per product. ``raw_*`` hold the
    same texts as normalised words before stemming (``raw_ids[raw_ptr[o]:raw_ptr[o + 1]]``).
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

    @classmethod
    def of(cls, index: TenantIndex) -> DocTerms:
        """The index's DocTerms, built once on first use (about 4 s for Home Depot's 54,667 titles)
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
        doc_of = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr))
        pairs = np.unique(doc_of * max(len(vocab), 1) + id_arr) % max(len(vocab), 1)
        df = np.bincount(pairs, minlength=len(vocab)).astype(np.int32)
        avg_len = float(len(id_arr)) / max(n, 1) or 1.0
        raw = np.asarray(raw_ids, dtype=np.int32)
        return cls(vocab, ptr, id_arr, df, n, list(vocab), avg_len, raw_vocab, raw_ptr, raw)

    def idf(self, token_id: int) -> float:
        """BM25 idf, ``ln(1 + (N - df + 0.5) / (df + 0.5))`` (Robertson & Zaragoza 2009); unknown: df 0."""
        df = int(self.df[token_id]) if token_id >= 0 else 0
        return math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))


def _phrase_at(tokens: list[int], phrase: tuple[int, ...]) -> int:
    """First position where ``phrase`` starts in ``tokens``, or -1."""
    first, width = phrase[0], len(phrase)
    for start, token in enumerate(tokens):
        if token == first and tuple(tokens[start : start + width]) == phrase:
            return start
    return -1


def candidate_features(ctx: SearchContext, candidates: Candidates) -> np.ndarray:
    """Feature matrix of the candidates, shape (n, len(FEATURES)), float32, columns as :data:`FEATURES`.

    Reads ``ctx.term_groups`` (each group: the analysed alternatives of one query term, phrases with
    spaces), and the lexical stage and the normalised query words from ``ctx.graph``. Cost: about
    2 ms for 110 candidates (Python, one thread).
    """
    index = ctx.index
    docs = DocTerms.of(index)
    n = len(candidates.ords)
    out = np.full((n, len(FEATURES)), np.nan, dtype=np.float32)
    if n == 0:
        return out
    col = {name: j for j, name in enumerate(FEATURES)}
    kept = [[alt for alt in group if alt] for group in ctx.term_groups]
    kept = [group for group in kept if group]
    groups = [[tuple(docs.vocab.get(tok, -1) for tok in alt.split(" ")) for alt in group] for group in kept]
    n_groups = len(groups)
    idf = np.asarray([sum(docs.idf(t) for t in g[0]) / len(g[0]) for g in groups], dtype=np.float64)
    numeric = np.asarray([group[0].replace(" ", "").isdigit() for group in kept], dtype=bool)
    stage = ctx.graph.stage if ctx.graph is not None else "none"
    lexical, cosine = candidates.lexical, candidates.cosine
    has_lex = ~np.isnan(lexical)
    out[:, col["terms"]] = n_groups
    out[:, col["stage"]] = STAGE_CODES.get(stage, 3)
    out[:, col["lexical_candidates"]] = int(has_lex.sum())
    out[:, col["lexical"]] = lexical
    best = float(np.nanmax(lexical)) if has_lex.any() else 0.0
    out[:, col["lexical_rel"]] = lexical / best if best > 0 else np.where(has_lex, 1.0, np.nan)
    rank = np.full(n, np.nan, dtype=np.float32)
    rank[has_lex] = np.arange(int(has_lex.sum()))
    out[:, col["lexical_rank"]] = rank
    out[:, col["cosine"]] = cosine
    has_cos = ~np.isnan(cosine)
    if has_cos.any():
        out[:, col["cosine_gap"]] = float(np.nanmax(cosine)) - cosine
        order = np.argsort(np.where(has_cos, -cosine, np.inf), kind="stable")
        cos_rank = np.empty(n, dtype=np.float32)
        cos_rank[order] = np.arange(n)
        out[:, col["cosine_rank"]] = np.where(has_cos, cos_rank, np.nan)
        spread = float(np.nanstd(cosine))
        out[:, col["cosine_z"]] = (cosine - float(np.nanmean(cosine))) / spread if spread > 0 else 0.0
    if candidates.vectors is not None and has_lex.any():
        top = candidates.vectors[np.flatnonzero(has_lex)[:CENTROID_OF]]
        centroid = top.sum(axis=0)
        norm = float(np.linalg.norm(centroid))
        if norm > 0:
            out[:, col["centroid"]] = np.where(has_cos, candidates.vectors @ (centroid / norm), np.nan)
    idf_total = float(idf.sum()) or 1.0
    idf_list = idf.tolist()
    ptr, ids, words = docs.ptr, docs.ids, docs.words
    avg_len = docs.avg_len
    numeric_groups = [g for g in range(n_groups) if numeric[g]]
    raw_query = [docs.raw_vocab.get(w, -1) for w in (ctx.graph.tokens if ctx.graph is not None else [])]
    raw_ptr, raw_ids = docs.raw_ptr, docs.raw_ids
    ords = candidates.ords.tolist()
    token_lists = [ids[ptr[o] : ptr[o + 1]].tolist() for o in ords]
    # per group, the candidates' words it matches as a prefix (or that are its prefix), found once
    seen = {t for tokens in token_lists for t in tokens}
    prefixes: list[set[int]] = []
    for group in kept:
        term = next((alt for alt in group if " " not in alt), None)
        if term is None or len(term) < 3:
            prefixes.append(set())
            continue
        prefixes.append(
            {t for t in seen if len(w := words[t]) >= 3 and (w.startswith(term) or term.startswith(w))}
        )
    nan = float("nan")
    rows = []
    for o, tokens in zip(ords, token_lists, strict=True):
        length = max(len(tokens), 1)
        first: dict[int, int] = {}
        tf: dict[int, int] = {}
        for p, t in enumerate(tokens):
            first.setdefault(t, p)
            tf[t] = tf.get(t, 0) + 1
        starts = [-1] * n_groups
        ends = [-1] * n_groups
        bm25 = 0.0
        query_tokens: set[int] = set()
        for g, alternatives in enumerate(groups):
            for alt in alternatives:
                p = first.get(alt[0], -1) if len(alt) == 1 else _phrase_at(tokens, alt)
                if p >= 0:
                    starts[g], ends[g] = p, p + len(alt)
                    f = tf[alt[0]] if len(alt) == 1 else 1
                    bm25 += idf_list[g] * f * (K1 + 1) / (f + K1 * (1 - B + B * length / avg_len))
                    query_tokens.update(alt)
                    break
        hit = [s >= 0 for s in starts]
        matched = sum(hit)
        prefix = matched + sum(1 for g in range(n_groups) if not hit[g] and not prefixes[g].isdisjoint(first))
        in_order = sum(1 for g in range(n_groups - 1) if hit[g] and hit[g + 1] and ends[g] == starts[g + 1])
        positions = [s for s in starts if s >= 0]
        if raw_query:
            raw_words = set(raw_ids[raw_ptr[o] : raw_ptr[o + 1]].tolist())
            exact = sum(w in raw_words for w in raw_query) / len(raw_query)
            exact_last = float(raw_query[-1] in raw_words)
        else:
            exact = exact_last = nan
        rows.append(
            (
                exact,
                exact_last,
                matched / n_groups if n_groups else 0.0,
                sum(idf_list[g] for g in range(n_groups) if hit[g]) / idf_total,
                max((idf_list[g] for g in range(n_groups) if not hit[g]), default=0.0),
                prefix / n_groups if n_groups else 0.0,
                bm25,
                float(hit[0]) if n_groups else 0.0,
                float(hit[-1]) if n_groups else 0.0,
                starts[-1] / length if n_groups and hit[-1] else nan,
                float(bool(tokens) and tokens[0] in query_tokens),
                in_order / (n_groups - 1) if n_groups > 1 else float(matched == n_groups),
                (max(positions) - min(positions) + 1) / length if positions else nan,
                min(positions) / length if positions else nan,
                len(tokens),
                len(query_tokens & first.keys()) / max(len(first), 1),
                sum(hit[g] for g in numeric_groups) / len(numeric_groups) if numeric_groups else nan,
            )
        )
    text_columns = [col[name] for name in TEXT_FEATURES]
    out[:, text_columns] = np.asarray(rows, dtype=np.float32).reshape(n, len(TEXT_FEATURES))
    c = col
    best_cover = float(out[:, c["coverage_idf"]].max())
    out[:, c["coverage_gap"]] = best_cover - out[:, c["coverage_idf"]]
    best_bm25 = float(out[:, c["bm25"]].max())
    out[:, c["bm25_rel"]] = out[:, c["bm25"]] / best_bm25 if best_bm25 > 0 else 0.0
    return out
