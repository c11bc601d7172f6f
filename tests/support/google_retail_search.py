"""Matching, ordering and facet counting of Google's stand-in (tests only; not Google's ranking).

A product matches when every query word is a word of its title, brands, categories, description or
text attributes (with ``queryExpansionSpec.condition = AUTO``: any word, when all words find nothing);
it scores two per title word, one per other word. ``orderBy`` takes ``field [desc]`` items, comma
separated, over number fields. Facets count text values, or numbers in the spec's intervals.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from tests.support.google_retail_filter import FilterSyntaxError, field_values

ORDERABLE = re.compile(r"^(price|rating|ratingCount|discount|attributes\.[A-Za-z0-9_]+)( desc)?$")


def retail_product(product: dict[str, Any], *, currency: str = "USD") -> dict[str, Any]:
    """An Aisle catalog product (id, title, brand, category, color, price, ...) as Retail Product JSON."""
    out: dict[str, Any] = {"id": str(product["id"]), "title": product.get("title") or product.get("name", "")}
    if product.get("brand"):
        out["brands"] = [product["brand"]]
    if product.get("category"):
        out["categories"] = [product["category"]]
    if product.get("color"):
        out["colorInfo"] = {"colorFamilies": [product["color"]]}
    if product.get("price") is not None:
        out["priceInfo"] = {"price": float(product["price"]), "currencyCode": currency}
    if product.get("description"):
        out["description"] = product["description"]
    attrs = {}
    for key, value in product.items():
        if key in {"id", "title", "name", "brand", "category", "color", "price", "description"}:
            continue
        if isinstance(value, str):
            attrs[key] = {"text": [value]}
        elif isinstance(value, int | float) and not isinstance(value, bool):
            attrs[key] = {"numbers": [float(value)]}
    if attrs:
        out["attributes"] = attrs
    return out


def _words(product: dict[str, Any]) -> tuple[set[str], set[str]]:
    cached = product.get("__words")  # the stand-in's own products: computed once, never sent
    if cached is None:
        cached = product["__words"] = _split(product)
    return cached  # type: ignore[no-any-return]


def _split(product: dict[str, Any]) -> tuple[set[str], set[str]]:
    title = set(re.findall(r"\w+", str(product.get("title", "")).lower()))
    other = " ".join(
        str(v) for key in ("brands", "categories", "description") for v in field_values(product, key)
    )
    texts = [t for a in product.get("attributes", {}).values() for t in a.get("text", [])]
    return title, set(re.findall(r"\w+", (other + " " + " ".join(texts)).lower()))


def search_products(
    products: list[dict[str, Any]], query: str, order_keys: list[tuple[str, bool]], *, expand: bool
) -> tuple[list[dict[str, Any]], bool]:
    """The matching products in answer order, and whether the query was expanded to any word."""
    words = re.findall(r"\w+", query.lower())
    scored = []
    for p in products:
        title, other = _words(p)
        if all(w in title or w in other for w in words):
            scored.append((sum(2 if w in title else 1 for w in words), p))
    expanded = False
    if not scored and expand and words:
        expanded = True
        for p in products:
            title, other = _words(p)
            score = sum(2 if w in title else 1 if w in other else 0 for w in words)
            if score:
                scored.append((score, p))
    hits = [p for _, p in sorted(scored, key=lambda t: -t[0])]  # stable: catalog order breaks ties
    for key, desc in reversed(order_keys):
        hits.sort(key=lambda p, k=key: (field_values(p, k) or [float("inf")])[0], reverse=desc)
    return hits, expanded


def order(order_by: str) -> list[tuple[str, bool]]:
    """``"price desc, rating"`` -> ``[("price", True), ("rating", False)]``; raises FilterSyntaxError."""
    keys = []
    for item in filter(None, (s.strip() for s in order_by.split(","))):
        m = ORDERABLE.match(item)
        if m is None:
            raise FilterSyntaxError(f"orderBy cannot order by {item!r}")
        keys.append((m.group(1), bool(m.group(2))))
    return keys


def page_token(offset: int) -> str:
    return base64.b64encode(str(offset).encode()).decode()


def _in(value: float, interval: dict[str, float]) -> bool:
    checks = [
        ("minimum", lambda b: value >= b),
        ("exclusiveMinimum", lambda b: value > b),
        ("maximum", lambda b: value <= b),
        ("exclusiveMaximum", lambda b: value < b),
    ]
    return all(test(float(interval[name])) for name, test in checks if name in interval)


def facets(hits: list[dict[str, Any]], specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """SearchResponse.facets for ``facetSpecs`` over ``hits`` (most frequent value first)."""
    out = []
    for spec in specs:
        key_spec = spec.get("facetKey", {})
        key = key_spec.get("key", "")
        limit = int(spec.get("limit", 0) or 50)
        values: list[dict[str, Any]] = []
        if key_spec.get("intervals"):
            for interval in key_spec["intervals"]:
                count = sum(
                    1
                    for p in hits
                    if any(_in(v, interval) for v in field_values(p, key) if not isinstance(v, str))
                )
                if count:
                    values.append({"interval": interval, "count": str(count)})
        else:
            counts: dict[str, int] = {}
            for p in hits:
                for v in {str(v) for v in field_values(p, key) if isinstance(v, str)}:
                    counts[v] = counts.get(v, 0) + 1
            ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
            values = [{"value": v, "count": str(c)} for v, c in ranked]
        out.append({"key": key, "values": values})
    return out
