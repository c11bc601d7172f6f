"""Query-product features for the learned ranker, computed over the candidates of one text query.

A learning-to-rank stage (Liu, "Learning to Rank for Information Retrieval", 2009) reorders the
candidates the lexical and vector stages found using signals neither orders by alone: how much of the
query a product's text covers (weighted by inverse document frequency, so missing a rare word costs
more than missing a common one), whether the query's words appear together and in order, where the
first one appears, and how the BM25 and MiniLM scores compare with the best of the same query.

Every feature is relative to the query or the catalog, never to one catalog's ids, so a model trained
on one set of queries applies to new ones. :data:`FEATURES` names the columns of
:func:`candidate_features`; a model stores the names it was trained on.

The text features are computed with numpy over all candidates of a query at once, from the token
table :class:`~aisle.search.ranking.doc_terms.DocTerms` caches on the index. Their values are those
of the one-candidate-at-a-time definition the models were trained with
(``tests/search/test_ranking_features.py`` keeps it as the reference), bit for bit on the 5,956 Home
Depot dev queries, so a stored model keeps working.

Tried for issue 43 and left out, none gaining at 95%: 5-fold CV NDCG@10 on the Home Depot dev judgments
over this set's 0.4394, each added alone, gain with its 95% CI over the 5,956 queries (the same model
with another seed moved by -0.0003 +/- 0.0017). The product's type word (the title's last word before
"with", "in", "for", "-" or "(") in the query or as its last word +0.0004 +/- 0.0017; the query's idf
share found among the type words, per-field coverage in place of BM25F on a catalog of titles only,
+0.0000; the catalog's P(type | query word) +0.0003; the type's share of the first ten served +0.0001;
numbers-with-unit agreement and conflict ("1/2 in", "60 watt") -0.0007; tokens between the first and
last matched words -0.0004; the cosine at depths (minus the tenth best, to the centroids of the first
1 and 20 lexical hits and of the 5 nearest) +0.0012 +/- 0.0013 over two seeds; the served rank -0.0004;
brand and product-line sizes +0.0002 and their share of the first ten -0.0004; all of them +0.0008 and
+0.0018 (two seeds); a query word x type affinity learned out of fold from the judgments -0.0006.
The trees already read most of it from coverage, last_term, cosine and centroid.
"""

from __future__ import annotations

import numpy as np

from aisle.search.context import Candidates, SearchContext
from aisle.search.ranking.doc_terms import DocTerms

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
_COL = {name: j for j, name in enumerate(FEATURES)}


def _concat(ptr: np.ndarray, ids: np.ndarray, ords: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The texts of products ``ords`` end to end: ``(tokens, candidate of each token, bounds)``, where
    ``tokens[bounds[i]:bounds[i + 1]]`` is the text of ``ords[i]``."""
    starts = ptr[ords]
    lens = ptr[ords + 1] - starts
    bounds = np.zeros(len(ords) + 1, dtype=np.int64)
    np.cumsum(lens, out=bounds[1:])
    owner = np.repeat(np.arange(len(ords)), lens)
    return ids[np.arange(bounds[-1]) + (starts - bounds[:-1])[owner]], owner, bounds


def _first_per(at: np.ndarray, owner: np.ndarray, pos: np.ndarray, n: int) -> np.ndarray:
    """Per candidate, the position of its first token among the ascending flat indices ``at``, or -1."""
    out = np.full(n, -1, dtype=np.int64)
    found, first = np.unique(owner[at], return_index=True)
    out[found] = pos[at[first]]
    return out


def _last_sum(x: np.ndarray) -> np.ndarray:
    """Row sums of ``x`` added left to right, as Python's ``sum`` does (numpy's pairwise sum may round
    differently), so trained models see the same values."""
    if x.shape[1] == 0:
        return np.zeros(len(x))
    return np.cumsum(x, axis=1)[:, -1]


def _nan_mean_std(x: np.ndarray, keep: np.ndarray) -> tuple[float, float]:
    """``float(np.nanmean(x)), float(np.nanstd(x))`` of a float32 vector with ``keep = ~np.isnan(x)`` (some
    True), computed as numpy does (float32 sums over ``x`` with its NaNs set to 0, divided in float64 and
    rounded to float32), so the values are the same bit for bit (checked on 20,000 random vectors), in
    about 12 us instead of 67 us for 121 values."""
    filled = np.where(keep, x, np.float32(0))
    count = int(keep.sum())
    mean = np.float32(float(filled.sum()) / count)
    deviation = np.where(keep, filled - mean, np.float32(0))
    var = np.float32(float((deviation * deviation).sum()) / count)
    return float(mean), float(np.sqrt(var))


def text_features(
    docs: DocTerms,
    ords: np.ndarray,
    groups: list[list[tuple[int, ...]]],
    prefix_terms: list[str | None],
    idf: list[float],
    numeric: list[bool],
    raw_query: list[int],
) -> dict[str, np.ndarray]:
    """The :data:`TEXT_FEATURES` of products ``ords``, by name: (n,) arrays (float64, or bool and int
    where the value is a flag or a count).

    ``groups[g]`` holds the alternatives of query group ``g`` as token ids (a phrase has several; -1 is
    a token the catalog lacks), ``prefix_terms[g]`` its one-word term for prefix matching (None: none),
    ``idf[g]`` its BM25 idf, ``numeric[g]`` whether it is a number; ``raw_query`` the query's unstemmed
    words as ``raw_vocab`` ids. A group matches at the first of its alternatives the text holds, in the
    order given. Computed with numpy over the candidates' tokens laid end to end: a fixed number of array
    operations per query, plus a few per phrase alternative and per vocabulary word that begins a query
    term (prefix matching), whatever the number of candidates.
    """
    n, n_groups = len(ords), len(groups)
    tok, owner, bounds = _concat(docs.ptr, docs.ids, ords)
    m = len(tok)
    pos = np.arange(m) - bounds[owner]  # position of each token in its product's text
    lens = np.diff(bounds)
    length = np.maximum(lens, 1)
    rows = np.arange(n)
    # each token as a column of the query's known tokens (-1: not a query token)
    wanted = sorted({t for group in groups for alt in group for t in alt if t >= 0})
    column = {t: j for j, t in enumerate(wanted)}
    n_wanted = len(wanted)
    qk = np.full(m, -1, dtype=np.int64)
    tf = np.zeros((n, n_wanted), dtype=np.int64)
    earliest_at = np.full(n * n_wanted, -1, dtype=np.int64)
    if n_wanted and m:
        known = np.asarray(wanted, dtype=tok.dtype)
        j = np.minimum(np.searchsorted(known, tok), n_wanted - 1)
        at = np.flatnonzero(known[j] == tok)
        qk[at] = j[at]
        cell = owner[at] * n_wanted + qk[at]
        tf = np.bincount(cell, minlength=n * n_wanted).reshape(n, n_wanted)
        cells, earliest = np.unique(cell, return_index=True)  # flat order: the first is the earliest
        earliest_at[cells] = pos[at[earliest]]
    first = earliest_at.reshape(n, n_wanted)
    # every alternative of every group as one column: where the text holds it first, and how often
    alts = [alt for group in groups for alt in group]
    n_alts = len(alts)
    at_pos = np.full((n, n_alts), -1, dtype=np.int64)
    freq = np.ones((n, n_alts), dtype=np.int64)  # a phrase counts once
    contains = np.zeros((n_alts, n_wanted), dtype=bool)
    words = [a for a, alt in enumerate(alts) if len(alt) == 1 and alt[0] >= 0]
    if words:
        held_as = [column[alts[a][0]] for a in words]
        at_pos[:, words] = first[:, held_as]
        freq[:, words] = tf[:, held_as]
    for a, alt in enumerate(alts):
        if min(alt) < 0:
            continue  # a token the catalog lacks: never held
        contains[a, [column[t] for t in alt]] = True
        if len(alt) > 1:  # a phrase: where its first token starts a run of its tokens within one text
            at = np.flatnonzero(qk == column[alt[0]])
            at = at[pos[at] + len(alt) <= lens[owner[at]]]
            for step, t in enumerate(alt[1:], 1):
                at = at[qk[at + step] == column[t]]
            at_pos[:, a] = _first_per(at, owner, pos, n)
    # per group, the first of its alternatives the text holds (n_alts: none)
    group_start = np.cumsum([0] + [len(group) for group in groups[:-1]]) if n_groups else np.zeros(0, int)
    choice = np.full((n, n_groups), n_alts, dtype=np.int64)
    if n_groups:
        choice = np.minimum.reduceat(np.where(at_pos >= 0, np.arange(n_alts), n_alts), group_start, axis=1)
    hits = choice < n_alts
    pick = np.minimum(choice, max(n_alts - 1, 0))
    start = at_pos[rows[:, None], pick]
    f = freq[rows[:, None], pick]
    width = np.asarray([len(alt) for alt in alts], dtype=np.int64)
    starts = np.where(hits, start, -1)
    ends = np.where(hits, start + width[pick] if n_alts else start, -1)
    idf_g = np.asarray(idf, dtype=np.float64)
    saturation = (K1 * (1 - B + B * length / docs.avg_len))[:, None]  # BM25's term-frequency saturation
    bm25 = _last_sum(np.where(hits, idf_g * f * (K1 + 1) / (f + saturation), 0.0))
    chosen = np.zeros((n, n_alts + 1), dtype=bool)
    chosen[rows[:, None], choice] = True
    held = chosen[:, :n_alts] @ contains  # (n, n_wanted): query tokens of the alternatives matched
    matched = hits.sum(axis=1)
    idf_total = float(np.sum(idf_g)) or 1.0  # numpy's summation order, as the models were trained with
    covered_idf = _last_sum(np.where(hits, idf_g, 0.0))
    missing_idf = np.where(hits, 0.0, idf_g).max(axis=1, initial=0.0)  # every idf is > 0
    # prefix matching: a text word starting with the group's term, or starting it (3 letters or more)
    prefix = matched
    spans = [(g, docs.ranks_starting(term)) for g, term in enumerate(prefix_terms) if term and len(term) >= 3]
    if spans and m:
        lo = np.asarray([span[0] for _, span in spans])[:, None]
        hi = np.asarray([span[1] for _, span in spans])[:, None]
        rank = docs.word_rank[tok]
        like = (rank >= lo) & (rank < hi)
        for i, (g, _) in enumerate(spans):
            term = prefix_terms[g]
            assert term is not None
            for cut in range(3, len(term)):
                shorter = docs.vocab.get(term[:cut])
                if shorter is not None:
                    like[i] |= tok == shorter
        total = np.zeros((len(spans), m + 1), dtype=np.int64)
        np.cumsum(like, axis=1, out=total[:, 1:])
        near = (total[:, bounds[1:]] - total[:, bounds[:-1]]).T > 0
        prefix = matched + (near & ~hits[:, [g for g, _ in spans]]).sum(axis=1)
    if n_groups > 1:
        adjacent = hits[:, :-1] & hits[:, 1:] & (ends[:, :-1] == starts[:, 1:])
        in_order = adjacent.sum(axis=1) / (n_groups - 1)
    else:
        in_order = (matched == n_groups).astype(np.float64)
    nan = np.full(n, np.nan)
    some = matched > 0
    lowest = np.where(hits, starts, m).min(axis=1, initial=m)
    highest = starts.max(axis=1, initial=-1)
    if n_wanted and m:
        lead = qk[np.minimum(bounds[:-1], m - 1)]  # the query column of each text's first token
        first_token = (lens > 0) & (lead >= 0) & held[rows, np.maximum(lead, 0)]
    else:
        first_token = np.zeros(n, dtype=bool)
    exact = exact_last = nan
    if raw_query:
        raw, raw_owner, _ = _concat(docs.raw_ptr, docs.raw_ids, ords)
        said = sorted({w for w in raw_query if w >= 0})
        has = np.zeros((n, len(said) + 1), dtype=bool)  # last column: a word the catalog lacks
        if said and len(raw):
            known = np.asarray(said, dtype=raw.dtype)
            j = np.minimum(np.searchsorted(known, raw), len(said) - 1)
            at = np.flatnonzero(known[j] == raw)
            has[raw_owner[at], j[at]] = True
        asked = [said.index(w) if w >= 0 else len(said) for w in raw_query]
        exact = has[:, asked].sum(axis=1) / len(raw_query)
        exact_last = has[:, asked[-1]]
    numbers = [g for g in range(n_groups) if numeric[g]]
    last = n_groups - 1
    columns = {
        "exact_coverage": exact,
        "exact_last": exact_last,
        "coverage": matched / n_groups if n_groups else np.zeros(n),
        "coverage_idf": covered_idf / idf_total,
        "missing_idf": missing_idf,
        "prefix_coverage": prefix / n_groups if n_groups else np.zeros(n),
        "bm25": bm25,
        "first_term": hits[:, 0] if n_groups else np.zeros(n),
        "last_term": hits[:, last] if n_groups else np.zeros(n),
        "last_position": np.where(hits[:, last], starts[:, last] / length, np.nan) if n_groups else nan,
        "first_token": first_token,
        "in_order": in_order,
        "span": np.where(some, (highest - lowest + 1) / length, np.nan),
        "first_position": np.where(some, lowest / length, np.nan),
        "doc_tokens": lens,
        "doc_covered": held.sum(axis=1) / np.maximum(docs.distinct[ords], 1),
        "numbers": hits[:, numbers].sum(axis=1) / len(numbers) if numbers else nan,
    }
    return columns


def candidate_features(ctx: SearchContext, candidates: Candidates) -> np.ndarray:
    """Feature matrix of the candidates, shape (n, len(FEATURES)), float32, columns as :data:`FEATURES`.

    Reads ``ctx.understanding.term_groups`` (each group: the analysed alternatives of one query term,
    phrases with spaces), and the lexical stage and the normalised query words from ``ctx.graph``.
    Cost, measured on Home Depot dev queries on one core: about 0.8 ms for the hybrid stage's
    candidates (121 on average; 2.4 ms one candidate at a time), 0.6 ms for 66 lexical ones; mostly a
    fixed number of numpy calls per query, so it grows slowly with the candidates.
    """
    index = ctx.index
    docs = DocTerms.of(index)
    n = len(candidates.ords)
    out = np.full((n, len(FEATURES)), np.nan, dtype=np.float32)
    if n == 0:
        return out
    col = _COL
    kept = [[alt for alt in group if alt] for group in ctx.understanding.term_groups]
    kept = [group for group in kept if group]
    groups = [[tuple(docs.vocab.get(tok, -1) for tok in alt.split(" ")) for alt in group] for group in kept]
    n_groups = len(groups)
    idf = [sum(docs.idf(t) for t in g[0]) / len(g[0]) for g in groups]
    numeric = [group[0].replace(" ", "").isdigit() for group in kept]
    stage = ctx.graph.stage if ctx.graph is not None else "none"
    lexical, cosine = candidates.lexical, candidates.cosine
    has_lex = ~np.isnan(lexical)
    out[:, col["terms"]] = n_groups
    out[:, col["stage"]] = STAGE_CODES.get(stage, 3)
    out[:, col["lexical_candidates"]] = int(has_lex.sum())
    out[:, col["lexical"]] = lexical
    best = float(lexical[has_lex].max()) if has_lex.any() else 0.0
    out[:, col["lexical_rel"]] = lexical / best if best > 0 else np.where(has_lex, 1.0, np.nan)
    rank = np.full(n, np.nan, dtype=np.float32)
    rank[has_lex] = np.arange(int(has_lex.sum()))
    out[:, col["lexical_rank"]] = rank
    out[:, col["cosine"]] = cosine
    has_cos = ~np.isnan(cosine)
    if has_cos.any():
        out[:, col["cosine_gap"]] = float(cosine[has_cos].max()) - cosine
        order = np.argsort(np.where(has_cos, -cosine, np.inf), kind="stable")
        cos_rank = np.empty(n, dtype=np.float32)
        cos_rank[order] = np.arange(n)
        out[:, col["cosine_rank"]] = np.where(has_cos, cos_rank, np.nan)
        mean, spread = _nan_mean_std(cosine, has_cos)
        out[:, col["cosine_z"]] = (cosine - mean) / spread if spread > 0 else 0.0
    if candidates.vectors is not None and has_lex.any():
        top = candidates.vectors[np.flatnonzero(has_lex)[:CENTROID_OF]]
        centroid = top.sum(axis=0)
        norm = float(np.linalg.norm(centroid))
        if norm > 0:
            out[:, col["centroid"]] = np.where(has_cos, candidates.vectors @ (centroid / norm), np.nan)
    prefix_terms = [next((alt for alt in group if " " not in alt), None) for group in kept]
    raw_query = [docs.raw_vocab.get(w, -1) for w in (ctx.graph.tokens if ctx.graph is not None else [])]
    text = text_features(docs, candidates.ords, groups, prefix_terms, idf, numeric, raw_query)
    for name, values in text.items():
        out[:, col[name]] = values
    best_cover = float(out[:, col["coverage_idf"]].max())
    out[:, col["coverage_gap"]] = best_cover - out[:, col["coverage_idf"]]
    best_bm25 = float(out[:, col["bm25"]].max())
    out[:, col["bm25_rel"]] = out[:, col["bm25"]] / best_bm25 if best_bm25 > 0 else 0.0
    return out
