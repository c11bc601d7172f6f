"""The ranker's vectorised features equal the per-candidate definition models were trained on.

:func:`_reference_features` is the straightforward per-candidate computation the features were first
written as (and the Home Depot ranker trained with); :func:`candidate_features` must give the same
values, column by column, or a model in use would silently score different inputs.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np

from aisle.core.tenancy import Tenants
from aisle.search.context import Candidates, SearchContext
from aisle.search.evaluation import load_judgments
from aisle.search.index.reader import TenantIndex
from aisle.search.pipeline import SearchPipeline
from aisle.search.query import SearchQuery
from aisle.search.ranking.doc_terms import DocTerms
from aisle.search.ranking.features import (
    CENTROID_OF,
    FEATURES,
    K1,
    STAGE_CODES,
    TEXT_FEATURES,
    B,
    candidate_features,
)
from aisle.search.stages.retrieve import lexical_candidates


def _phrase_at(tokens: list[int], phrase: tuple[int, ...]) -> int:
    first, width = phrase[0], len(phrase)
    for start, token in enumerate(tokens):
        if token == first and tuple(tokens[start : start + width]) == phrase:
            return start
    return -1


def _reference_features(ctx: SearchContext, candidates: Candidates) -> np.ndarray:
    """The features one candidate at a time, in plain Python (the implementation before numpy)."""
    docs = DocTerms.of(ctx.index)
    n = len(candidates.ords)
    out = np.full((n, len(FEATURES)), np.nan, dtype=np.float32)
    if n == 0:
        return out
    col = {name: j for j, name in enumerate(FEATURES)}
    kept = [[alt for alt in group if alt] for group in ctx.understanding.term_groups]
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
    numeric_groups = [g for g in range(n_groups) if numeric[g]]
    raw_query = [docs.raw_vocab.get(w, -1) for w in (ctx.graph.tokens if ctx.graph is not None else [])]
    ords = candidates.ords.tolist()
    token_lists = [docs.ids[docs.ptr[o] : docs.ptr[o + 1]].tolist() for o in ords]
    seen = {t for tokens in token_lists for t in tokens}
    prefixes: list[set[int]] = []
    for group in kept:
        term = next((alt for alt in group if " " not in alt), None)
        if term is None or len(term) < 3:
            prefixes.append(set())
            continue
        prefixes.append(
            {t for t in seen if len(w := docs.words[t]) >= 3 and (w.startswith(term) or term.startswith(w))}
        )
    nan = math.nan
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
                    bm25 += idf_list[g] * f * (K1 + 1) / (f + K1 * (1 - B + B * length / docs.avg_len))
                    query_tokens.update(alt)
                    break
        hit = [s >= 0 for s in starts]
        matched = sum(hit)
        prefix = matched + sum(1 for g in range(n_groups) if not hit[g] and not prefixes[g].isdisjoint(first))
        in_order = sum(1 for g in range(n_groups - 1) if hit[g] and hit[g + 1] and ends[g] == starts[g + 1])
        positions = [s for s in starts if s >= 0]
        if raw_query:
            raw_words = set(docs.raw_ids[docs.raw_ptr[o] : docs.raw_ptr[o + 1]].tolist())
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
    out[:, [col[name] for name in TEXT_FEATURES]] = np.asarray(rows, dtype=np.float32).reshape(n, -1)
    best_cover = float(out[:, col["coverage_idf"]].max())
    out[:, col["coverage_gap"]] = best_cover - out[:, col["coverage_idf"]]
    best_bm25 = float(out[:, col["bm25"]].max())
    out[:, col["bm25_rel"]] = out[:, col["bm25"]] / best_bm25 if best_bm25 > 0 else 0.0
    return out


def _with_vectors(found: Candidates, seed: int) -> Candidates:
    """``found`` as the hybrid stage would leave it: vector-only products after the lexical ones,
    unit embeddings with their cosines, and some products without a vector (NaN cosine, zero row)."""
    rng = np.random.default_rng(seed)
    extra = rng.choice(50_000, size=12, replace=False).astype(np.int64)
    n = len(found.ords) + len(extra)
    vectors = rng.normal(size=(n, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    cosine = (vectors @ vectors[0]).astype(np.float32)
    missing = rng.random(n) < 0.1
    cosine[missing], vectors[missing] = np.nan, 0.0
    lexical = np.concatenate([found.lexical, np.full(len(extra), np.nan, dtype=np.float32)])
    return Candidates(np.concatenate([found.ords, extra]), lexical, cosine, vectors)


def _assert_same(ctx: SearchContext, found: Candidates) -> np.ndarray:
    want, got = _reference_features(ctx, found), candidate_features(ctx, found)
    assert got.shape == want.shape and got.dtype == np.float32
    for j, name in enumerate(FEATURES):
        np.testing.assert_allclose(
            got[:, j],
            want[:, j],
            rtol=0,
            atol=1e-6,
            equal_nan=True,
            err_msg=f"{ctx.understanding.text!r}: {name}",
        )
    return want


def test_vectorised_features_equal_the_per_candidate_definition(
    homedepot: tuple[Tenants, TenantIndex], shared_data: Path
) -> None:
    tenants, index = homedepot
    config = tenants.config("homedepot")
    pipeline = SearchPipeline(budget_s=5.0)
    judged = sorted(load_judgments(shared_data / "homedepot" / "judgments_dev.csv"))
    queries = [
        *judged[::150],
        "aluminum edging",  # the stemmed/unstemmed pair the coverage test relies on
        "tool box",  # joined to "toolbox": a phrase among the alternatives
        "toolbox",
        "2 x 4 x 8 lumber",  # numbers, a repeated word
        "1/2 in. pvc pipe",
        "refrigirator whirlpool",  # a typo with its correction
        "xyzzyq",  # nothing the catalog holds
    ]
    compared = []
    for i, query in enumerate(queries):
        ctx = pipeline.run(index, config, SearchQuery(query, size=10))
        if ctx.retrieval.match_query is None or ctx.output.total == 0:
            continue
        found = lexical_candidates(ctx, 100)
        compared.append(_assert_same(ctx, found))
        _assert_same(ctx, _with_vectors(found, seed=i))
    # hand-made groups: a phrase alternative after a missing word, a token the catalog lacks, a
    # group held by two queries' words at once, short terms (no prefix matching), an empty group, and
    # the first word of a text as an alternative the text holds but the group does not match with
    ctx = pipeline.run(index, config, SearchQuery("aluminum lawn edging", size=10))
    found = lexical_candidates(ctx, 100)
    docs = DocTerms.of(index)
    lead = docs.words[int(docs.ids[docs.ptr[found.ords[0]]])]
    for groups in (
        [["aluminum"], ["qqqzz", "lawn edg"], ["edg"]],
        [["lawn"], ["edg", "lawn"], ["al"], [""], ["alumin", "qqqzz"]],
        [["qqqzz qqqzz"]],
        [],
        [["edg", lead], ["aluminum"]],
        [[f"{lead} qqqzz"], ["edg"]],
    ):
        understood = dataclasses.replace(ctx.understanding, term_groups=groups)
        compared.append(_assert_same(dataclasses.replace(ctx, understanding=understood), found))
    # the comparison means something only if the fixture exercises what the features tell apart
    x = np.vstack(compared)
    col = {name: j for j, name in enumerate(FEATURES)}
    assert len(compared) >= 30
    assert np.any(x[:, col["prefix_coverage"]] > x[:, col["coverage"]])
    assert np.any((x[:, col["in_order"]] > 0) & (x[:, col["in_order"]] < 1))
    assert np.any(x[:, col["exact_coverage"]] < x[:, col["coverage"]])
    assert np.any(x[:, col["first_token"]] == 1)
    numbers = x[:, col["numbers"]]  # NaN for queries without a number; a share of them matched otherwise
    assert np.any(np.isnan(numbers)) and np.any(numbers > 0) and np.any(numbers < 1)
    assert compared[-2][0, col["first_token"]] == 0 and compared[-1][0, col["first_token"]] == 0
    assert np.any((x[:, col["doc_covered"]] > 0) & (x[:, col["doc_covered"]] < 1))


def test_features_of_no_candidates_are_empty(homedepot: tuple[Tenants, TenantIndex]) -> None:
    tenants, index = homedepot
    ctx = SearchPipeline(budget_s=5.0).run(
        index, tenants.config("homedepot"), SearchQuery("aluminum edging", size=10)
    )
    none = np.zeros(0, dtype=np.float32)
    empty = Candidates(np.zeros(0, dtype=np.int64), none, none)
    assert candidate_features(ctx, empty).shape == (0, len(FEATURES))
