"""Text normalisation shared by indexing and querying, so both sides spell units the same way.

Lowercase, accents stripped (NFKD), unit spellings unified (``1/2"``, ``1/2 inch``, ``1/2 in.`` →
``1/2 in``; ``8'``, ``8 feet`` → ``8 ft``; gallon → gal, pounds/lbs → lb, ounces → oz,
``sq. ft.``/square feet → ``sq ft``, ``60W``/``60-Watt`` → ``60 watt``, volts/V → volt, amps → amp),
digits split from letters (``2x4`` → ``2 x 4``), punctuation dropped except inside numbers
(``1/2``, ``2.5``).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_INCH = re.compile(r'(\d)\s*(?:"|”|″|-?\s*inch(?:es)?\b\.?|-?\s*in\.(?=\s|$)|-?\s*in\b)')
_FOOT = re.compile(r"(\d)\s*(?:'|’|′|-?\s*f(?:oo|ee)?t\b\.?)")
_SQFT = re.compile(r"\b(?:sq\.?\s*ft\.?|sqft|square\s+f(?:ee|oo)t)")
_UNITS = [
    (re.compile(r"(\d)\s*-?\s*(?:gallons?|gal\.?)(?=\W|$)"), r"\1 gal "),
    (re.compile(r"(\d)\s*-?\s*(?:pounds?|lbs?\.?)(?=\W|$)"), r"\1 lb "),
    (re.compile(r"(\d)\s*-?\s*(?:ounces?|oz\.?)(?=\W|$)"), r"\1 oz "),
    (re.compile(r"(\d)\s*-?\s*(?:watts?|w)(?=\W|$)"), r"\1 watt "),
    (re.compile(r"(\d)\s*-?\s*(?:volts?|v)(?=\W|$)"), r"\1 volt "),
    (re.compile(r"(\d)\s*-?\s*(?:amps?|amperes?)(?=\W|$)"), r"\1 amp "),
]
UNIT_WORDS = frozenset({"in", "ft", "sq", "gal", "lb", "oz", "watt", "volt", "amp"})
"""The unit words the normaliser writes after a number: a query's ``in`` or ``ft`` names no product."""
_DIGIT_ALPHA = re.compile(r"(?<=\d)(?=[a-z])|(?<=[a-z])(?=\d)")
_PUNCT = re.compile(r"[^\w\s/.\-]")
_LOOSE = re.compile(r"(?<!\d)[./-]|[./-](?!\d)")
_WS = re.compile(r"\s+")
_DIGIT = re.compile(r"\d")
CACHED_CHARS = 64
"""Texts up to this long are remembered (:func:`normalize`): brands, colours, categories and short
titles repeat across a catalog, and an index build normalises each searchable value."""


def normalize(text: str) -> str:
    """The normalised form of ``text`` (see the module docstring). Pure; about 10 µs for a query, and
    a dictionary lookup for a short text seen lately (the last 65,536 of up to :data:`CACHED_CHARS`)."""
    return _normalize_short(text) if len(text) <= CACHED_CHARS else _normalize(text)


def _normalize(text: str) -> str:
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    digits = _DIGIT.search(text) is not None  # all but _SQFT need one to match: most texts skip them
    if digits:
        text = _DIGIT_ALPHA.sub(" ", text)
        text = _INCH.sub(r"\1 in ", text)
        text = _FOOT.sub(r"\1 ft ", text)
    text = _SQFT.sub(" sq ft ", text)
    if digits:
        for pattern, repl in _UNITS:
            text = pattern.sub(repl, text)
    text = _PUNCT.sub(" ", text)
    text = _LOOSE.sub(" ", text)
    return _WS.sub(" ", text).strip()


_normalize_short = lru_cache(maxsize=65_536)(_normalize)
