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
# An unfinished word's completion scores PREFIX_SCORE x the field's weight x sqrt(its products among
# those the other words match / the most frequent completion's): "cordless dr" reads as "cordless
# drill" (135 cordless products) before "cordless drip" (1), as a suggestion list would rank them.
PREFIX_SCORE = 4.0
# Completions are counted among the other words' matches from this many characters typed; below,
# catalog-wide. One: a one-letter prefix counted among them costs 0.1-1.7 ms a field on Home Depot titles
# (at most "s" among the 16,191 products of "x", on a loaded machine), and the catalog's most frequent
# words missed the names a shopper types ("arrow woman k" is no kurta; 40% typed, 0.35 -> 0.42).
COUNTED_FROM = 1
FINISHED_SHARE = 0.5


def prefix_query(
    index: TenantIndex,
    prefix: str,
    stem: str,
    *,
    within: tantivy.Query | None,
    others: frozenset[str] = frozenset(),
) -> tuple[tantivy.Query | None, int]:
    """Products with a word beginning with ``prefix`` (the last word as typed, normalised) or equal to
    ``stem`` (its analysed form) in a searchable field, and the postings that reads: a dis-max over the
    fields and the :data:`PREFIX_EXPANSIONS` most frequent such words of each, counted among the
    products ``within`` matches (the query's other words; None or under :data:`COUNTED_FROM`
    characters: the whole catalog, as when none of them has a completion). The word reads as finished
    when its own form is at least :data:`FINISHED_SHARE` as common there as its commonest completion
    ("screw" among "wood" products, not "dr" among "cordless" ones): it is then searched as typed
    (None: a whole query typed without a space after it keeps its answer, and its exact matches are
    not diluted by "screwdriver"), as it is when no word begins so (a misspelt word: its correction
    searches); otherwise the completions score by that count (:data:`PREFIX_SCORE`). A completion that
    is one of the query's ``others`` words adds nothing ("adidas men's ad" is not "adidas men's adidas")
    and is left out."""
    found = _completions(index, prefix, stem, within if len(prefix) >= COUNTED_FROM else None, others)
    if not found and within is not None:
        found = _completions(index, prefix, stem, None, others)
    if not found:  # no word begins so: searched as typed (its spelling correction, if any)
        return None, 0
    top = max(count for *_, count in found)
    own = max((count for _, term, _, count in found if term == stem), default=0)
    if own >= FINISHED_SHARE * top:  # a finished word: searched as typed
        return None, 0
    subs = [
        tantivy.Query.const_score_query(
            tantivy.Query.term_query(index.schema, field, term), PREFIX_SCORE * weight * (count / top) ** 0.5
        )
        for field, term, weight, count in found
    ]
    query = subs[0] if len(subs) == 1 else tantivy.Query.disjunction_max_query(subs, TIE_BREAKER)
    return query, sum(index.searcher.doc_freq(field, term) for field, term, *_ in found)


def _completions(
    index: TenantIndex, prefix: str, stem: str, within: tantivy.Query | None, others: frozenset[str]
) -> list[tuple[str, str, float, int]]:
    """(field, term, field weight, products) of the completions of ``prefix`` and of ``stem`` but not
    ``others``, counted among ``within``'s matches (None: catalog-wide, from the index's cache)."""
    expansions, searcher = index.fuzzy_terms(), index.searcher
    found: list[tuple[str, str, float, int]] = []
    for attr in index.config.attributes:
        if not attr.searchable:
            continue
        field = f"s_{attr.name}"
        if within is None:
            words = dict(expansions.prefixed(field, prefix, PREFIX_EXPANSIONS))
        else:
            words = dict(
                searcher.terms_with_prefix(field, prefix, filter_query=within, limit=PREFIX_EXPANSIONS)
            )
        if stem not in words:
            own = tantivy.Query.term_query(index.schema, field, stem)
            if within is None:
                count = searcher.doc_freq(field, stem)
            else:
                count = index.count(
                    tantivy.Query.boolean_query([(tantivy.Occur.Must, within), (tantivy.Occur.Must, own)])
                )
            if count:
                words[stem] = count
        found.extend(
            (field, str(term), attr.weight, int(count))
            for term, count in words.items()
            if count and (term == stem or term not in others)
        )
    return found


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
