"""Query understanding, first stage: normalisation, tokens, stop words, analysed terms."""

from __future__ import annotations

import re
import unicodedata

from aisle.search.attributes import extract_price
from aisle.search.context import SearchContext
from aisle.search.model import Correction, QueryGraph

_INCH = re.compile(r'(\d)\s*(?:"|”|″|-?\s*inch(?:es)?\b\.?|-?\s*in\.(?=\s|$)|-?\s*in\b)', re.IGNORECASE)
_FOOT = re.compile(r"(\d)\s*(?:'|’|′|-?\s*f(?:oo|ee)?t\b\.?)", re.IGNORECASE)
_PUNCT = re.compile(r"[^\w\s/.\-]")
_WS = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Lowercase, strip accents, unify unit spellings, drop punctuation, fold white space.

    ``1/2 in.``, ``1/2"`` and ``1/2 inch`` all become ``1/2 in``; ``8'`` and ``8 ft.`` become ``8 ft``.
    """
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    text = _INCH.sub(r"\1 in ", text)
    text = _FOOT.sub(r"\1 ft ", text)
    text = _PUNCT.sub(" ", text)
    text = re.sub(r"(?<!\d)[./-]|[./-](?!\d)", " ", text)  # keep 1/2, 2.5, 2-1 inside numbers only
    return _WS.sub(" ", text).strip()


class Understand:
    """Builds the queryGraph's normalised query, tokens and analysed terms."""

    def run(self, ctx: SearchContext) -> SearchContext:
        normalized = normalize(ctx.query)
        price = None
        if ctx.index.dictionary.has_price:
            price, normalized = extract_price(normalized)
            ctx.price = price
        tokens = normalized.split()
        stop = {w.lower() for w in ctx.config.global_.stop_words}
        kept = [t for t in tokens if t not in stop]
        removed = [t for t in tokens if t in stop]
        if not kept and tokens:  # a query of stop words only still searches them
            kept, removed = tokens, []
        terms: list[str] = []
        groups: list[list[str]] = []
        corrections: list[Correction] = []
        typo = ctx.config.global_.stages.typo
        for token in kept:
            analysed = ctx.index.analyze(token)
            alternatives: list[str] = []
            if len(analysed) == 1:
                corrected = ctx.index.speller.correct(token, typo)
                if corrected is not None:
                    corrections.append(Correction(original=token, corrected=corrected))
                    alternatives = [t for t in ctx.index.analyze(corrected) if t != analysed[0]][:1]
            for term in analysed:
                if term not in terms:
                    terms.append(term)
                    groups.append([term, *alternatives])
        ctx.terms = terms
        ctx.term_groups = groups
        ctx.graph = QueryGraph(
            original=ctx.query,
            normalized=normalized,
            tokens=kept,
            terms=terms,
            stop_words=removed,
            corrections=corrections,
            price=price.as_range() if price else None,
            sort=ctx.sort,
        )
        return ctx
