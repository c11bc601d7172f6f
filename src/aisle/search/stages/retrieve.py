"""Staged full-text retrieval with BM25 (tantivy), stopping at the first stage with enough hits.

1. ``strict``: every term must match (in any searchable field).
2. ``relaxed``: most terms must match (``relaxed_min_should_match`` of them, at least one fewer than
   all); documents matching more terms rank first (:data:`COVERAGE_SCORE`).
3. ``typo``: the last resort: any one term (but see *weak terms* below), each term also matching
   within an edit distance that grows with its length (spelling's typo rule,
   :func:`aisle.search.spelling.typo_distance`: words of letters alone, 1 from ``min_length_one_typo``
   characters, 2 from ``min_length_two_typos``; the Levenshtein automaton of tantivy's FuzzyTermQuery,
   transpositions costing 1), unless the term's
   postings pass :data:`FUZZY_MAX_SHARE` of the catalog (a word spelled as the catalog spells it).

*Weak terms* never carry a match alone in the relaxed and typo stages: a term group each of whose
forms is a single character, holds no letter (a digit group: ``8``, ``1/2``, ``2.5``), is a stop word,
is one of the units the normaliser writes (:data:`~aisle.search.normalize.UNIT_WORDS`) or is a letter
group of under three letters split from digits in one typed word (the ``dw`` of ``dw988``). They cannot
identify a product by themselves (the normaliser splits ``8f3a2kj`` into ``8 f 3 a 2 kj``; a lone
``8`` or ``f`` is in half a hardware catalog), so those stages also require one of the query's other
terms, and a query of weak terms only is answered by ``strict`` alone. Weak terms still count towards
the relaxed stage's minimum and still score. This is Typesense's ``drop_tokens`` and Algolia's
``removeWordsIfNoResults`` read as "drop the least informative words first, never down to nothing
useful": the typo stage keeps any one informative word, ranked by how many words match.

Per term, fields are combined as a dis-max (:func:`aisle.search.query.terms.term_query`); an
alternative a term's other alternative already covers (the phrase "men s" beside "men") is not searched.

The relaxed and typo stages read every posting of every term they hold (tantivy's unions and its
min-should-match disjunction score each one; a term kept only for scoring is read as much, measured in
issue 32), so their cost is the sum of their terms' postings. They hold the query's terms from the
rarest up while those postings stay within :data:`POSTINGS_BUDGET` catalogs' worth; the commonest terms
past it ("men", in the title or gender of half the fashion products, 44,000 postings) are dropped from
those two stages (never from ``strict``) and listed in the stage's ``stages_tried`` entry as
``dropped``. The attributes recognised in the query
still boost in those stages (a dropped "men" still ranks men's products first through the gender
boost). The ``total`` is the exact count of the answering stage's matches.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Set
from dataclasses import dataclass

import numpy as np
import tantivy

from aisle.core.errors import BadRequest, ErrorCode
from aisle.search.context import Candidates, Hit, SearchContext
from aisle.search.index.reader import TenantIndex, hit_count
from aisle.search.normalize import UNIT_WORDS
from aisle.search.query.terms import fuzzy_query, prefix_query, term_query, with_filter
from aisle.search.spelling import typo_distance
from aisle.search.stages.stock import unboosted

FUZZY_WEIGHT = 0.5
# Each matched query term adds this constant, so documents matching more terms rank first and BM25
# orders documents of equal coverage (Algolia's "words" criterion before text relevance). Tuned on
# the Home Depot dev judgments (plain BM25 OR: 0.380); large enough to outweigh a field weight of 3.
COVERAGE_SCORE = 10.0
# BM25 orders documents of equal coverage and attribute matches in the relaxed stages: scaled down
# so that a rare word's BM25 (times a field weight of 3) cannot outweigh a whole matched term.
BM25_SCALE = 0.25
# The postings the relaxed and typo stages may read, in catalogs' worth (module docstring): bounds
# their cost however many common words a long query holds (issue 32). Measured on the bench demo: 1.0
# kept Home Depot dev NDCG@10 (0.4459 against 0.4458) and the fashion known-item ranks of product
# names cut to 1..12 words; 0.5 read less but lost 2 of 40 known items at 8 and 12 words and 0.0001
# of NDCG.
POSTINGS_BUDGET = 1.0
# A term whose postings pass this share of the catalog gets no typo expansion in the typo stage: the
# expansion walks the term dictionary of every searchable field (measured: a third of the typo stage's
# and of its facet counting's time for a 12-word name). 0.05 kept the figures above; 0.01 lost 0.0004
# of Home Depot NDCG@10.
FUZZY_MAX_SHARE = 0.05


def essential(group: list[str]) -> list[str]:
    """The alternatives of a term group that can match a product no other alternative matches: a
    phrase holding one of the group's single-word alternatives is dropped ("men s" beside "men": every
    field with the phrase has the word)."""
    words = {alt for alt in group if " " not in alt}
    return [alt for alt in group if " " not in alt or not words.intersection(alt.split(" "))]


def weak(group: list[str], stop_words: set[str], fragments: Set[str] = frozenset()) -> bool:
    """Whether a term group cannot identify a product by itself (module docstring, *weak terms*):
    every one of its forms is one character, holds no letter, is a stop word, a unit word or a short
    letter group split from digits (``fragments``: the ``dw`` of ``dw988``)."""

    def weak_form(form: str) -> bool:  # a phrase: when every word of it is
        return all(
            len(w) <= 1
            or not any(ch.isalpha() for ch in w)
            or w in stop_words
            or w in UNIT_WORDS
            or w in fragments
            for w in form.split(" ")
        )

    return all(weak_form(form) for form in group)


def postings(index: TenantIndex, group: list[str]) -> int:
    """How many postings the exact query of a term group reads: per searchable field and alternative,
    its document frequency there (a phrase: its rarest word's, the most its phrase can hold)."""
    searcher, total = index.searcher, 0
    for attr in index.config.attributes:
        if attr.searchable:
            field = f"s_{attr.name}"
            total += sum(min(searcher.doc_freq(field, w) for w in alt.split(" ")) for alt in group)
    return total


def within_budget(costs: list[int], budget: float) -> list[int]:
    """Positions of the terms kept: from the cheapest up while their summed cost stays within
    ``budget``; the cheapest is always kept. In query order."""
    kept: list[int] = []
    spent = 0
    for i in sorted(range(len(costs)), key=costs.__getitem__):
        if kept and spent + costs[i] > budget:
            break
        kept.append(i)
        spent += costs[i]
    return sorted(kept)


def _covered(exact: tantivy.Query, fuzzy: tantivy.Query | None = None) -> list[tantivy.Query]:
    """One term's scoring parts: BM25 plus :data:`COVERAGE_SCORE` when it matches exactly; a fuzzy-only
    match satisfies the term with a smaller constant, so typos never outrank exact matches."""
    parts = [
        tantivy.Query.boost_query(exact, BM25_SCALE),
        tantivy.Query.const_score_query(exact, COVERAGE_SCORE),
    ]
    if fuzzy is not None:
        parts.append(tantivy.Query.const_score_query(fuzzy, COVERAGE_SCORE * FUZZY_WEIGHT))
    return parts


def _any(queries: list[tantivy.Query], msm: int = 1) -> tantivy.Query:
    return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in queries], msm)


def _as_filters(query: tantivy.Query, extracted: list[tuple[tantivy.Query, float]]) -> tantivy.Query:
    if not extracted:
        return query
    filters = [(tantivy.Occur.Must, tantivy.Query.const_score_query(q, 0.0)) for q, _ in extracted]
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, query), *filters])


def _with_boosts(matching: tantivy.Query, extracted: list[tuple[tantivy.Query, float]]) -> tantivy.Query:
    if not extracted:
        return matching
    boosts = [(tantivy.Occur.Should, tantivy.Query.const_score_query(q, boost)) for q, boost in extracted]
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, matching), *boosts])


@dataclass
class RetrievalStage:
    """One retrieval stage: its ``name``, its ``query`` (match and score), a ``lean`` query matching the
    same products without the scoring parts, and the terms it ``dropped`` (module docstring)."""

    name: str
    query: tantivy.Query
    lean: tantivy.Query
    dropped: list[str]


def stages(ctx: SearchContext) -> Iterator[RetrievalStage]:
    """The stages to try, in order, each built when the previous one did not answer. The lean query
    matches the same products as the match query without its scoring parts: each term once instead of
    twice (BM25 and :data:`COVERAGE_SCORE`), no extracted-attribute boosts (optional clauses beside a
    required one never change what matches). Facet counting over it is exact and cheaper (issue 32:
    5.4 against 3.9 ms of CPU for a 12-word product name matching 28,000 fashion products)."""
    groups, extracted = ctx.understanding.term_groups, ctx.understanding.extracted
    if not groups:
        if extracted:  # a query of a price phrase only ("under 500"): filter, then plain browse
            filtered = _as_filters(tantivy.Query.all_query(), extracted)
            yield RetrievalStage("browse", filtered, filtered, [])
        yield RetrievalStage("browse", tantivy.Query.all_query(), tantivy.Query.all_query(), [])
        return
    index, config = ctx.index, ctx.config.global_.stages
    groups = [essential(group) for group in groups]
    exact = [term_query(index, group) for group in groups]
    typed, typed_cost = _typed(ctx, exact)
    strict = _as_filters(tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in exact]), extracted)
    near = _typed_in_order(ctx, groups, typed)
    yield RetrievalStage("strict", _with_boosts(strict, near), strict, [])
    n = len(groups)
    costs = [postings(index, group) for group in groups]
    if typed is not None:
        costs[typed] += typed_cost
    kept = within_budget(costs, POSTINGS_BUDGET * max(1, index.num_docs()))
    dropped = [groups[i][0] for i in range(n) if i not in kept]
    exact, groups, costs = [exact[i] for i in kept], [groups[i] for i in kept], [costs[i] for i in kept]
    stop = {w.lower() for w in ctx.config.global_.stop_words}
    strong = [not weak(group, stop, ctx.understanding.fragments) for group in groups]
    if not any(strong):  # weak terms only: nothing past strict (module docstring)
        return
    if n >= 2 or extracted:
        k = len(exact)
        msm = max(1, min(k - 1, math.ceil(k * config.relaxed_min_should_match))) if k >= 2 else 1
        matching = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, _any(_covered(q))) for q in exact], msm
        )
        lean = _any(exact, msm)
        if not all(strong):
            anchor = _any([q for q, s in zip(exact, strong, strict=True) if s])
            matching, lean = _both(matching, anchor), _both(lean, anchor)
        yield RetrievalStage("relaxed", _with_boosts(matching, extracted + near), lean, dropped)
    distances = _distances(ctx, groups)
    if any(distances) or n >= 3:
        common = FUZZY_MAX_SHARE * index.num_docs()
        fuzzy = [
            fuzzy_query(index, g[0], d) if d and cost <= common else None
            for g, d, cost in zip(groups, distances, costs, strict=True)
        ]
        # any one term: every scoring part is a clause of one union (no union per term)
        parts = [part for q, f in zip(exact, fuzzy, strict=True) for part in _covered(q, f)]
        either = [
            part
            for q, f, is_strong in zip(exact, fuzzy, strong, strict=True)
            if is_strong
            for part in (q, f)
            if part is not None
        ]
        scored = _any(parts)
        if not all(strong):  # any one strong term, the weak ones scoring beside it
            scored = _both(scored, _any(either))
        yield RetrievalStage("typo", _with_boosts(scored, extracted + near), _any(either), dropped)


def _typed(ctx: SearchContext, exact: list[tantivy.Query]) -> tuple[int | None, int]:
    """For a search as you type, the unfinished last word's query (in ``exact``, replaced in place)
    matches the words beginning with it, scored by how common each is among the other words' matches
    (:func:`~aisle.search.query.terms.prefix_query`): its position and the postings its expansions add
    (None and 0 when the word is finished, has no completion, or the search is not typed)."""
    if ctx.understanding.prefix is None:
        return None, 0
    at, typed = ctx.understanding.prefix
    group = ctx.understanding.term_groups[at]
    others = [q for k, q in enumerate(exact) if k != at]
    within = tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in others]) if others else None
    words = frozenset(g[0] for k, g in enumerate(ctx.understanding.term_groups) if k != at)
    query, cost = prefix_query(ctx.index, typed, group[0], within=within, others=words)
    if query is None:  # a finished word, or one no word begins with: as typed
        return None, 0
    exact[at] = query  # its completions, not its spelling correction ("cordless dri" is no "dry")
    return at, cost


# Search as you type: the words before the unfinished one, found in that order (one other word between
# at most) in a searchable field, add this times the field's weight. A product name typed in part is
# its first words in order (Typesense ranks by proximity likewise); BM25 alone ranked the many products
# holding the same words anywhere alike.
IN_ORDER_SCORE = 4.0


def _typed_in_order(
    ctx: SearchContext, groups: list[list[str]], typed: int | None
) -> list[tuple[tantivy.Query, float]]:
    """For a search as you type with at least two words before the unfinished one: per searchable
    field, the phrase of those words (slop 1) and its boost (:data:`IN_ORDER_SCORE`); else none."""
    if typed is None:
        return []
    words = [g[0] for k, g in enumerate(groups) if k != typed and " " not in g[0]]
    if len(words) < 2:
        return []
    index = ctx.index
    return [
        (
            tantivy.Query.phrase_query(index.schema, f"s_{attr.name}", list(words), 1),
            IN_ORDER_SCORE * attr.weight,
        )
        for attr in index.config.attributes
        if attr.searchable
    ]


def _both(query: tantivy.Query, required: tantivy.Query) -> tantivy.Query:
    """``query``'s matches that also match ``required`` (which adds nothing to the score)."""
    return tantivy.Query.boolean_query(
        [(tantivy.Occur.Must, query), (tantivy.Occur.Must, tantivy.Query.const_score_query(required, 0.0))]
    )


def _distances(ctx: SearchContext, groups: list[list[str]]) -> list[int]:
    typo = ctx.config.global_.stages.typo
    return [typo_distance(group[0], typo) for group in groups]  # a phrase head: 0 (not letters alone)


def lexical_candidates(ctx: SearchContext, n: int) -> Candidates:
    """The first ``n`` hits of ``ctx.retrieval.match_query`` with their scores (no cosine): retrieval's own
    when it fetched at least ``n`` (``ctx.retrieval.candidate_depth``), else one more search."""
    kept = ctx.retrieval.lexical
    if kept is not None and n <= ctx.retrieval.candidate_depth:
        return Candidates(kept.ords[:n], kept.lexical[:n], kept.cosine[:n])
    assert ctx.retrieval.match_query is not None
    found = ctx.index.searcher.search(ctx.retrieval.match_query, n).hits
    return _candidates(ctx, found)


def _candidates(ctx: SearchContext, found: list[tuple[float, tantivy.DocAddress]]) -> Candidates:
    """``found``'s rows and scores (the stock tiers' boosts taken out, :func:`unboosted`)."""
    ords = np.asarray(ctx.index.ords(found) if found else [], dtype=np.int64)
    lexical = unboosted(ctx, np.asarray([float(s) for s, _ in found], dtype=np.float32))
    return Candidates(ords, lexical, np.full(len(ords), np.nan, dtype=np.float32))


class Retrieve:
    """Runs the stages, keeps the first with ``min_hits`` (or the one with most hits), with its page.

    Raises:
        BadRequest: ``sort_unavailable`` when sorting by price on a catalog without prices.
    """

    def run(self, ctx: SearchContext) -> SearchContext:
        index = ctx.index
        min_hits = ctx.config.global_.stages.min_hits
        assert ctx.graph is not None
        order_field = None
        if ctx.query.sort != "relevance":
            order_field = index.price_field
            if order_field is None:
                raise BadRequest(
                    "this tenant's catalog has no price to sort by", code=ErrorCode.SORT_UNAVAILABLE
                )
        order = tantivy.Order.Asc if ctx.query.sort == "price_asc" else tantivy.Order.Desc
        offset, size = ctx.window()
        # the later stages' candidates come from this search when they read more than the page
        deep = ctx.retrieval.candidate_depth
        if order_field is not None or size == 0 or offset + size >= deep:
            deep = 0
        best: tuple[str, tantivy.Query, tantivy.SearchResult, tantivy.Query] | None = None
        for stage in stages(ctx):
            name, lean = stage.name, stage.lean
            full = with_filter(
                stage.query,
                ctx.retrieval.filter_query,
                exclude=ctx.merchandising.exclude_query,
                boosts=ctx.merchandising.boosts,
            )
            if deep:
                result = index.searcher.search(full, deep, count=True)
            elif order_field is None:
                result = index.searcher.search(full, max(size, 1), count=True, offset=offset)
            else:
                result = index.searcher.search(
                    full,
                    max(size, 1),
                    count=True,
                    offset=offset,
                    order_by_field=order_field,
                    order=order,
                )
            tried: dict[str, object] = {"stage": name, "hits": hit_count(result)}
            if stage.dropped:
                tried["dropped"] = stage.dropped
            ctx.graph.stages_tried.append(tried)
            if best is None or hit_count(result) > hit_count(best[2]):
                best = (name, full, result, lean)
            if hit_count(result) >= min_hits or ctx.past_deadline():
                break
        assert best is not None
        name, ctx.retrieval.match_query, result, lean = best
        # the same products without the scoring parts (a merchandising boost is an optional clause)
        lean = with_filter(lean, ctx.retrieval.filter_query, exclude=ctx.merchandising.exclude_query)
        ctx.retrieval.lean_match = (ctx.retrieval.match_query, lean)
        ctx.output.total = hit_count(result)
        ctx.graph.stage = name if ctx.output.total > 0 else "none"  # type: ignore[assignment]
        if size == 0 or not result.hits:
            return ctx
        found = result.hits
        if deep:
            ctx.retrieval.lexical = _candidates(ctx, found)
            ords = ctx.retrieval.lexical.ords[offset : offset + size].tolist()
            found = found[offset : offset + size]
        else:
            ords = index.ords(found)
        scores = unboosted(ctx, np.asarray([s if isinstance(s, int | float) else 0.0 for s, _ in found]))
        ctx.output.hits = [Hit(o, float(s)) for s, o in zip(scores, ords, strict=True)]
        return ctx
