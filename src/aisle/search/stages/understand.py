"""Query understanding, first stage: normalisation, tokens, stop words, synonyms, spelling.

Each query word becomes one *term group*: the analysed term plus alternatives any of which satisfies
it — a synonym, a spelling correction, or the other side of a compound ("rainbarrel" / "rain barrel",
"thresh hold" / "threshold"). Multi-word alternatives are searched as phrases. A word the catalog
knows is never corrected, and corrections are searched alongside the original, never instead of it.
"""

from __future__ import annotations

from collections.abc import Callable

import tantivy

from aisle.search.attributes import extract_price
from aisle.search.context import SearchContext
from aisle.search.model import Correction, QueryGraph, SynonymExpansion
from aisle.search.normalize import UNIT_WORDS, normalize
from aisle.search.query.terms import term_query
from aisle.search.synonyms import SynonymTables

FRAGMENT_LETTERS = 3


def fragments(text: str, analyze: Callable[[str], list[str]]) -> set[str]:
    """The analysed letter groups of fewer than :data:`FRAGMENT_LETTERS` letters that the normaliser
    splits from digits in one word of ``text`` (``dw988`` -> ``dw``; see
    :class:`~aisle.search.context.Understanding`)."""
    found: set[str] = set()
    for word in text.lower().split():
        if not (any(ch.isdigit() for ch in word) and any(ch.isalpha() for ch in word)):
            continue
        for piece in normalize(word).split():
            if piece.isalpha() and len(piece) < FRAGMENT_LETTERS:
                found.update(analyze(piece))
    return found


class Understand:
    """Builds the queryGraph's normalised query, tokens, terms and the term groups searched.

    ``synonyms``: the tenants' synonym tables this stage reads (default: its own, built as needed).
    """

    def __init__(self, synonyms: SynonymTables | None = None) -> None:
        self.synonyms = synonyms if synonyms is not None else SynonymTables()

    def run(self, ctx: SearchContext) -> SearchContext:
        index = ctx.index
        normalized = normalize(ctx.understanding.text)
        price = None
        if index.dictionary.has_price:
            price, normalized = extract_price(normalized)
            ctx.understanding.price = price
        tokens = normalized.split()
        stop = {w.lower() for w in ctx.config.global_.stop_words}
        kept = [t for t in tokens if t not in stop]
        removed = [t for t in tokens if t in stop]
        if not kept and tokens:  # a query of stop words only still searches them
            kept, removed = tokens, []

        def phrase(text: str) -> str:
            return " ".join(index.analyze(text))

        speller = index.speller
        typo = ctx.config.global_.stages.typo
        synonyms = self.synonyms.table(ctx.config.global_)
        terms: list[str] = []
        groups: list[list[str]] = []
        corrections: list[Correction] = []
        expansions: list[SynonymExpansion] = []
        match_terms: list[str] = []  # what attribute extraction reads (see SearchContext)
        dictionary = index.dictionary
        split_off = fragments(ctx.understanding.text, index.analyze)  # never corrected (weak terms)
        # search as you type: the last word, unless a space follows it, may be unfinished
        typing = ctx.query.prefix and bool(tokens) and not ctx.understanding.text[-1:].isspace()
        typing = typing and bool(kept) and kept[-1] == tokens[-1]
        prefix: tuple[str, str] | None = None
        i = 0
        while i < len(kept):
            n, alternatives = synonyms.match(kept, i)
            if n:
                text = " ".join(kept[i : i + n])
                expansions.append(SynonymExpansion(text=text, expansions=alternatives))
                group = [phrase(text), *(phrase(a) for a in alternatives)]
                self._add(groups, terms, index.analyze(text), [g for g in group if g])
                forms = [index.analyze(f) for f in (text, *alternatives)]
                match_terms.extend(next((f for f in forms if dictionary.has(f)), forms[0]))
                i += n
                continue
            token = kept[i]
            nxt = kept[i + 1] if i + 1 < len(kept) else None
            if nxt is not None and token.isalpha() and nxt.isalpha() and speller.frequency(token + nxt) >= 3:
                joined = token + nxt
                corrections.append(Correction(original=f"{token} {nxt}", corrected=joined, kind="join"))
                self._add(
                    groups, terms, index.analyze(f"{token} {nxt}"), [phrase(joined), phrase(f"{token} {nxt}")]
                )
                match_terms.extend(index.analyze(f"{token} {nxt}"))
                i += 2
                continue
            analysed = index.analyze(token)
            alternatives = []
            readable = analysed
            if typing and i == len(kept) - 1 and len(analysed) == 1:  # a word being typed
                prefix = (analysed[0], token)
            if (
                len(analysed) == 1
                and token.isalpha()
                and not speller.known(token)
                and token not in UNIT_WORDS  # "2w" is "2 watt": a unit, not a misspelt "want"
                and analysed[0] not in split_off
            ):
                context = [w for j, w in enumerate(kept) if j != i and speller.known(w)]
                suggestion = self._best_candidate(ctx, speller.candidates(token, typo), context)
                split = speller.split(token) if suggestion is None or suggestion[1] >= 2 else None
                if split is not None:
                    corrections.append(Correction(original=token, corrected=" ".join(split), kind="split"))
                    alternatives.append(phrase(" ".join(split)))
                elif suggestion is not None:
                    corrections.append(Correction(original=token, corrected=suggestion[0]))
                    alternatives.append(phrase(suggestion[0]))
                    readable = index.analyze(suggestion[0])
            for term in analysed:
                self._add(groups, terms, [term], [term, *(a for a in alternatives if a and a != term)])
            match_terms.extend(readable)
            i += 1
        ctx.understanding.terms = terms
        if prefix is not None:
            at = next((k for k, g in enumerate(groups) if g[0] == prefix[0]), None)
            ctx.understanding.prefix = (at, prefix[1]) if at is not None else None
        ctx.understanding.fragments = split_off
        ctx.understanding.match_terms = match_terms
        ctx.understanding.term_groups = groups
        ctx.graph = QueryGraph(
            original=ctx.understanding.text,
            normalized=normalized,
            tokens=kept,
            terms=terms,
            stop_words=removed,
            corrections=corrections,
            synonyms=expansions,
            price=price.as_range() if price else None,
            sort=ctx.query.sort,
        )
        return ctx

    @staticmethod
    def _best_candidate(
        ctx: SearchContext, candidates: list[tuple[str, int]], context: list[str]
    ) -> tuple[str, int] | None:
        """Among the nearest candidates, the one most often found with the query's other words.

        A noisy-channel choice with the catalog as language model: equal edit distance, then the
        number of products holding the candidate and any other query word ("seed speader" →
        spreader, not speaker), then catalog frequency.
        """
        if not candidates:
            return None
        nearest = [c for c in candidates if c[1] == candidates[0][1]]
        if len(nearest) == 1 or not context:
            return nearest[0]
        index = ctx.index
        other_terms = [t for w in context for t in index.analyze(w)]

        def together(candidate: str) -> int:
            cand = index.analyze(candidate)
            if not cand:
                return 0
            with_cand = term_query(index, [cand[0]])
            others = tantivy.Query.boolean_query(
                [(tantivy.Occur.Should, term_query(index, [t])) for t in other_terms]
            )
            query = tantivy.Query.boolean_query(
                [(tantivy.Occur.Must, with_cand), (tantivy.Occur.Must, others)]
            )
            return index.count(query)

        scored = [(together(word), -k, word, dist) for k, (word, dist) in enumerate(nearest)]
        best = max(scored)
        return best[2], best[3]

    @staticmethod
    def _add(groups: list[list[str]], terms: list[str], analysed: list[str], group: list[str]) -> None:
        """Append a term group unless an earlier group already searches its first form."""
        if not group or any(g[0] == group[0] for g in groups):
            return
        groups.append(list(dict.fromkeys(group)))
        terms.extend(t for t in analysed if t not in terms)
