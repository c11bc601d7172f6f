"""The Retail filter grammar as Google's stand-in evaluates it (tests only).

Google Cloud Retail, "Filter and order results": ``key: ANY("a", "b")`` (text), ``key: IN(lo, hi)``
(numbers; bounds ``10.0e`` exclusive, ``10.0i`` inclusive, ``*`` open), ``NOT``, ``AND``, ``OR`` and
parentheses; case-sensitive; anything else is INVALID_ARGUMENT (:class:`FilterSyntaxError`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Product = dict[str, Any]
Predicate = Callable[[Product], bool]

_TOKEN = re.compile(
    r"""\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<bound>[-+]?\d+(?:\.\d+)?[ei]|\*)"""
    r"""|(?P<word>[A-Za-z_][A-Za-z0-9_.]*)|(?P<punct>[():,]))"""
)


class FilterSyntaxError(ValueError):
    """A filter the Retail API would answer 400 INVALID_ARGUMENT."""


def field_values(product: Product, key: str) -> list[Any]:
    """The values of a Retail product field named as filters, facets and orderBy name it."""
    if key == "price":
        price = product.get("priceInfo", {}).get("price")
        return [] if price is None else [float(price)]
    if key == "colorFamilies":
        return list(product.get("colorInfo", {}).get("colorFamilies", []))
    if key.startswith("attributes."):
        attr = product.get("attributes", {}).get(key.split(".", 1)[1], {})
        return [float(n) for n in attr.get("numbers", [])] + list(attr.get("text", []))
    value = product.get(key)
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise FilterSyntaxError(f"unrecognised filter at {pos}: {text[pos : pos + 20]!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, kind: str, value: str | None = None) -> str:
        tok = self.peek()
        if tok is None or tok[0] != kind or (value is not None and tok[1] != value):
            raise FilterSyntaxError(f"expected {value or kind}, got {tok[1] if tok else 'end'}")
        self.i += 1
        return tok[1]

    def expr(self) -> Predicate:
        parts = [self.conj()]
        while self.peek() == ("word", "OR"):
            self.i += 1
            parts.append(self.conj())
        return parts[0] if len(parts) == 1 else lambda p: any(f(p) for f in parts)

    def conj(self) -> Predicate:
        parts = [self.unary()]
        while self.peek() == ("word", "AND"):
            self.i += 1
            parts.append(self.unary())
        return parts[0] if len(parts) == 1 else lambda p: all(f(p) for f in parts)

    def unary(self) -> Predicate:
        if self.peek() == ("word", "NOT"):
            self.i += 1
            inner = self.unary()
            return lambda p: not inner(p)
        if self.peek() == ("punct", "("):
            self.i += 1
            inner = self.expr()
            self.take("punct", ")")
            return inner
        key = self.take("word")
        self.take("punct", ":")
        op = self.take("word")
        self.take("punct", "(")
        if op == "ANY":
            values = {self._string()}
            while self.peek() == ("punct", ","):
                self.i += 1
                values.add(self._string())
            self.take("punct", ")")
            return lambda p: any(str(v) in values for v in field_values(p, key))
        if op == "IN":
            lo = self.take("bound")
            self.take("punct", ",")
            hi = self.take("bound")
            self.take("punct", ")")
            return lambda p: any(_within(v, lo, hi) for v in field_values(p, key) if not isinstance(v, str))
        raise FilterSyntaxError(f"unknown operator {op}")

    def _string(self) -> str:
        raw = self.take("str")[1:-1]
        return re.sub(r"\\(.)", r"\1", raw)


def _within(value: float, lo: str, hi: str) -> bool:
    if lo != "*":
        bound = float(lo[:-1])
        if value < bound or (lo.endswith("e") and value == bound):
            return False
    if hi != "*":
        bound = float(hi[:-1])
        if value > bound or (hi.endswith("e") and value == bound):
            return False
    return True


def parse_filter(text: str) -> Predicate:
    """A predicate over Retail product JSON; ``""`` passes everything. Raises FilterSyntaxError."""
    if not text.strip():
        return lambda p: True
    parser = _Parser(text)
    predicate = parser.expr()
    if parser.peek() is not None:
        raise FilterSyntaxError(f"unexpected {parser.peek()}")
    return predicate
