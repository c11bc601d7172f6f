"""Query terms and filters as tantivy queries: what the retrieval stages, hybrid retrieval, spelling
correction and browsing build their searches from.

Per term, fields are combined as a dis-max (best field plus :data:`TIE_BREAKER` of the others, as
Elasticsearch's ``best_fields``), each field's BM25 scaled by its configured weight.
"""

from __future__ import annotations

import tantivy

from aisle.search.index.reader import TenantIndex

TIE_BREAKER = 0.3


def term_query(index: TenantIndex, terms: list[str]) -> tantivy.Query:
    """Dis-max over the searchable fields of one query term's alternatives (BM25 scaled by weight).

    An alternative with spaces ("rain barrel") is searched as a phrase.
    """
    subs = []
    for attr in index.config.attributes:
        if not attr.searchable:
            continue
        field = f"s_{attr.name}"
        for term in terms:
            words: list[str | tuple[int, str]] = list(term.split(" "))
            if len(words) == 1:
                query = tantivy.Query.term_query(index.schema, field, term)
            else:
                query = tantivy.Query.phrase_query(index.schema, field, words, 0)
            subs.append(tantivy.Query.boost_query(query, attr.weight))
    return subs[0] if len(subs) == 1 else tantivy.Query.disjunction_max_query(subs, TIE_BREAKER)


# Up to this many expansions of a term in a field are searched as a union of term queries (each read
# lazily: measured, the typo stage and its facet counting cost half as much at 12 words as with
# tantivy's automaton or a term set, which both build a bitset of every match first); more, as a term
# set (Home Depot dev queries: 16 was faster than 64 or 4, in p50 and p99, fashion the same).
FUZZY_UNION_MAX = 16


def fuzzy_query(index: TenantIndex, term: str, distance: int) -> tantivy.Query:
    """The term within ``distance`` edits in any searchable field (the optimal string alignment
    distance, a transposition costing 1, as tantivy's Levenshtein automaton): a set of the field's
    terms found once per index (:meth:`~aisle.search.index.reader.TenantIndex.fuzzy_terms`), not an
    automaton walked by each search. Matches the same products as tantivy's ``FuzzyTermQuery``; scores
    are not meant to be used (callers wrap it in a constant score)."""
    expansions = index.fuzzy_terms()
    subs = []
    for attr in index.config.attributes:
        if not attr.searchable:
            continue
        field = f"s_{attr.name}"
        found = expansions.expand(field, term, distance)
        if not found:
            continue
        if len(found) == 1:
            subs.append(tantivy.Query.term_query(index.schema, field, found[0]))
        elif len(found) > FUZZY_UNION_MAX:
            subs.append(tantivy.Query.term_set_query(index.schema, field, list(found)))
        else:
            subs.extend(tantivy.Query.term_query(index.schema, field, t) for t in found)
    if not subs:
        return tantivy.Query.empty_query()
    return (
        subs[0] if len(subs) == 1 else tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in subs])
    )


# The words a query's last, unfinished word may be the start of, per searchable field: the most frequent
# ones (Typesense's prefix search expands to its most relevant prefix matches likewise).
PREFIX_EXPANSIONS = 24
# A completion's score: PREFIX_SCORE x the field's weight x sqrt(its documents / the most frequent
# completion's), so "red shi" reads as "red shirt" (thousands of products) before "red shy" (five), as
# a suggestion list would rank them; BM25 would rank the rarest completion first.
PREFIX_SCORE = 4.0


def prefix_query(index: TenantIndex, prefix: str, stem: str) -> tuple[tantivy.Query, int]:
    """Products with a word beginning with ``prefix`` (the unfinished word, normalised) or equal to
    ``stem`` (its analysed form) in a searchable field, and the postings that reads: a dis-max over
    the fields of constant scores by how common each word is (:data:`PREFIX_SCORE`), for the
    :data:`PREFIX_EXPANSIONS` most frequent words of each field. An empty query when none matches."""
    expansions, searcher = index.fuzzy_terms(), index.searcher
    found: list[tuple[str, str, float, int]] = []
    for attr in index.config.attributes:
        if not attr.searchable:
            continue
        field = f"s_{attr.name}"
        words = dict(expansions.prefixed(field, prefix, PREFIX_EXPANSIONS))
        if stem not in words:
            count = searcher.doc_freq(field, stem)
            if count:
                words[stem] = count
        found.extend((field, term, attr.weight, count) for term, count in words.items())
    if not found:
        return tantivy.Query.empty_query(), 0
    top = max(count for *_, count in found)
    subs = [
        tantivy.Query.const_score_query(
            tantivy.Query.term_query(index.schema, field, term), PREFIX_SCORE * weight * (count / top) ** 0.5
        )
        for field, term, weight, count in found
    ]
    query = subs[0] if len(subs) == 1 else tantivy.Query.disjunction_max_query(subs, TIE_BREAKER)
    return query, sum(count for *_, count in found)


def tantivy_fuzzy_query(index: TenantIndex, term: str, distance: int) -> tantivy.Query:
    """:func:`fuzzy_query` as tantivy's ``FuzzyTermQuery`` per field (its automaton walked per search):
    the reference the expansions are checked against."""
    subs = [
        tantivy.Query.fuzzy_term_query(index.schema, f"s_{attr.name}", term, distance, True, False)
        for attr in index.config.attributes
        if attr.searchable
    ]
    return (
        subs[0] if len(subs) == 1 else tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in subs])
    )


def with_filter(
    query: tantivy.Query,
    filter_query: tantivy.Query | None,
    *,
    exclude: tantivy.Query | None = None,
    boosts: list[tuple[tantivy.Query, float]] | None = None,
) -> tantivy.Query:
    """``query`` restricted by ``filter_query``, without ``exclude``, plus constant ``boosts``.

    A boost of weight w adds w to matching products' scores; a bury (w < 0) adds |w| to every
    product that does not match instead, so scores stay non-negative.
    """
    if filter_query is None and exclude is None and not boosts:
        return query
    clauses = [(tantivy.Occur.Must, query)]
    if filter_query is not None:
        clauses.append((tantivy.Occur.Must, tantivy.Query.const_score_query(filter_query, 0.0)))
    if exclude is not None:
        clauses.append((tantivy.Occur.MustNot, exclude))
    for condition, weight in boosts or []:
        if weight >= 0:
            clauses.append((tantivy.Occur.Should, tantivy.Query.const_score_query(condition, weight)))
        else:
            others = tantivy.Query.boolean_query(
                [(tantivy.Occur.Must, tantivy.Query.all_query()), (tantivy.Occur.MustNot, condition)]
            )
            clauses.append((tantivy.Occur.Should, tantivy.Query.const_score_query(others, -weight)))
    return tantivy.Query.boolean_query(clauses)
