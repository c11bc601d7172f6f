"""Attribute extraction: recognise the tenant's own values (brand, colour, gender, category, size)
and price constraints in a query.

Values are matched on analysed (stemmed) word sequences, longest first, left to right, so
"peter england shirts" finds brand Peter England before anything shorter and "shoes" matches the
category node "Footwear > Shoes". Price phrases: "under 2000", "below $50", "less than 30",
"over 100", "between 20 and 50", "20 to 50", "50-100" (only for tenants whose catalog has a price).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from aisle.catalog.schema import PATH_SEP
from aisle.core.tenant_config import AttributeConfiguration, AttributeRole, AttributeType

MAX_VALUE_WORDS = 4
# Words people type for a gender value, by the value's analysed form.
GENDER_ALIASES = {
    "men": ["man", "male", "gent", "gents", "mens"],
    "women": ["woman", "female", "ladi", "lady", "womens"],
    "boy": ["kid", "kids", "child", "children"],
    "girl": ["kid", "kids", "child", "children"],
}
_STOP = {"and", "of", "for", "the", "with", "in", "on", "a", "an", "&"}
_NUM = r"(\d+(?:\.\d+)?)"
_CUR = r"(?:\$|rs\.?|inr|usd|eur|€|₹)?\s*"
_UNIT = r"\s*(?:\$|rs\.?|inr|usd|dollars?|rupees?|bucks)?"
PRICE_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\bbetween\s+{_CUR}{_NUM}{_UNIT}\s+(?:and|to|-)\s+{_CUR}{_NUM}{_UNIT}"), "between"),
    (
        re.compile(
            rf"\b(?:under|below|less than|cheaper than|up to|upto|within|max|at most|<)\s*{_CUR}{_NUM}{_UNIT}"
        ),
        "lt",
    ),
    (re.compile(rf"\b(?:over|above|more than|greater than|at least|min|>)\s*{_CUR}{_NUM}{_UNIT}"), "gt"),
    (re.compile(rf"(?:^|\s){_CUR}{_NUM}{_UNIT}\s*(?:-|to)\s*{_CUR}{_NUM}{_UNIT}(?=\s|$)"), "between"),
]


@dataclass(frozen=True)
class Extraction:
    """One recognised attribute: the words it covered and the catalog values they name."""

    field: str
    values: tuple[str, ...]
    text: str
    terms: tuple[str, ...]


@dataclass
class PriceConstraint:
    gte: float | None = None
    lte: float | None = None
    text: str = ""

    def as_range(self) -> dict[str, float]:
        rng: dict[str, float] = {}
        if self.gte is not None:
            rng["gte"] = self.gte
        if self.lte is not None:
            rng["lte"] = self.lte
        return rng


def extract_price(text: str) -> tuple[PriceConstraint | None, str]:
    """The first price phrase of ``text`` (lowercased) and the text without it."""
    for pattern, kind in PRICE_PATTERNS:
        m = pattern.search(text)
        if m is None:
            continue
        numbers = [float(g) for g in m.groups() if g is not None]
        if kind == "between":
            lo, hi = sorted(numbers[:2])
            constraint = PriceConstraint(gte=lo, lte=hi, text=m.group(0).strip())
        elif kind == "lt":
            constraint = PriceConstraint(lte=numbers[0], text=m.group(0).strip())
        else:
            constraint = PriceConstraint(gte=numbers[0], text=m.group(0).strip())
        return constraint, (text[: m.start()] + " " + text[m.end() :]).strip()
    return None, text


@dataclass
class AttributeDictionary:
    """Analysed value word sequences → (attribute, canonical value, catalog count)."""

    entries: dict[tuple[str, ...], list[tuple[str, str, int]]] = field(default_factory=dict)
    has_price: bool = False

    def add(self, key: tuple[str, ...], attr: str, value: str, count: int) -> None:
        if not key or len(key) > MAX_VALUE_WORDS or all(k in _STOP for k in key):
            return
        bucket = self.entries.setdefault(key, [])
        if not any(a == attr and v == value for a, v, _ in bucket):
            bucket.append((attr, value, count))

    def has(self, terms: list[str]) -> bool:
        """Whether this exact analysed word sequence names a value."""
        return tuple(terms) in self.entries

    def match(self, terms: list[str]) -> list[Extraction]:
        """Greedy longest-first matches over the analysed query terms."""
        found: list[Extraction] = []
        i = 0
        while i < len(terms):
            for n in range(min(MAX_VALUE_WORDS, len(terms) - i), 0, -1):
                key = tuple(terms[i : i + n])
                hits = self.entries.get(key)
                if hits:
                    by_field: dict[str, list[str]] = {}
                    for attr, value, _ in sorted(hits, key=lambda h: -h[2]):
                        by_field.setdefault(attr, []).append(value)
                    for attr, values in by_field.items():
                        found.append(Extraction(attr, tuple(values), " ".join(key), key))
                    i += n
                    break
            else:
                i += 1
        return found


def build_dictionary(
    config: AttributeConfiguration,
    value_counts: dict[str, dict[str, int]],
    analyze: Callable[[str], list[str]],
) -> AttributeDictionary:
    """The dictionary of extractable attributes from ``{attribute: {value: product count}}``."""
    dictionary = AttributeDictionary(has_price=config.by_role(AttributeRole.price) is not None)
    for attr in config.attributes:
        if not attr.extractable or attr.name not in value_counts:
            continue
        for value, count in value_counts[attr.name].items():
            if attr.type is AttributeType.category_path:
                continue
            else:
                key = tuple(analyze(value))
                dictionary.add(key, attr.name, value, count)
                if attr.role is AttributeRole.gender and len(key) == 1:
                    for alias in GENDER_ALIASES.get(key[0], []):
                        dictionary.add((alias,), attr.name, value, count)
        if attr.type is AttributeType.category_path:
            nodes: dict[str, int] = {}
            for value, count in value_counts[attr.name].items():
                parts = value.split(PATH_SEP)
                for level in range(len(parts)):
                    node = PATH_SEP.join(parts[: level + 1])
                    nodes[node] = nodes.get(node, 0) + count
            for node, count in nodes.items():
                dictionary.add(tuple(analyze(node.split(PATH_SEP)[-1])), attr.name, node, count)
    return dictionary
