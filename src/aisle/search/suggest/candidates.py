"""Suggestion candidates: query-log entries, brands, category names and product names of one tenant.

Each candidate has a display text, its :func:`normalize` key, a ``type`` and a popularity:

- ``query``: the number of times the query was searched (the log's count);
- ``brand``: the number of products of the brand;
- ``category``: the number of products under the category node (every node of every path; the leaf
  name is shown, nodes of the same name in different branches are one candidate);
- ``product``: the number of products sharing the normalised title (1 for most).

Candidates are deduplicated on their key across types, keeping the more useful type (brand, then
category, then query, then product: a typed entity says more than free text), and only candidates
whose search returns products are kept (:class:`ResultCheck`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import polars as pl
import tantivy

from aisle.catalog.schema import PATH_SEP
from aisle.core.tenant_config import AttributeConfiguration, AttributeRole, AttributeType
from aisle.search.index.reader import TenantIndex
from aisle.search.normalize import normalize

SuggestionType = Literal["query", "brand", "category", "product"]
TYPE_ORDER: tuple[SuggestionType, ...] = ("brand", "category", "query", "product")
"""Preference when two types give the same key, and the order of their id ranges."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """One possible suggestion. ``key`` is ``normalize(text)``; ``hits`` is filled for queries only."""

    text: str
    key: str
    type: SuggestionType
    popularity: float
    hits: int = 0


def _grouped(texts: list[str], counts: list[int], kind: SuggestionType) -> list[Candidate]:
    """Add up counts per normalised key; show the spelling with the largest count."""
    total: dict[str, int] = {}
    best: dict[str, tuple[int, str]] = {}
    for text, count in zip(texts, counts, strict=True):
        key = normalize(text)
        if not key:
            continue
        total[key] = total.get(key, 0) + count
        if key not in best or count > best[key][0]:
            best[key] = (count, text)
    return [Candidate(best[k][1], k, kind, float(c)) for k, c in total.items()]


def brand_candidates(products: pl.DataFrame, config: AttributeConfiguration) -> list[Candidate]:
    """Brands (the attribute with role ``brand``) with their product counts."""
    attr = config.by_role(AttributeRole.brand)
    if attr is None or attr.name not in products.columns:
        return []
    counts = products[attr.name].drop_nulls().cast(pl.Utf8).value_counts()
    return _grouped(counts[attr.name].to_list(), counts["count"].to_list(), "brand")


def category_candidates(products: pl.DataFrame, config: AttributeConfiguration) -> list[Candidate]:
    """Category nodes (the ``category_path`` attribute, role ``category`` first) by leaf name."""
    attrs = [a for a in config.attributes if a.type is AttributeType.category_path]
    attrs.sort(key=lambda a: a.role is not AttributeRole.category)
    if not attrs or attrs[0].name not in products.columns:
        return []
    column = attrs[0].name
    counts = products[column].drop_nulls().value_counts()
    per_node: dict[str, int] = {}
    for path, count in counts.iter_rows():
        parts = [p.strip() for p in str(path).split(PATH_SEP)]
        for level in range(len(parts)):
            node = PATH_SEP.join(parts[: level + 1])
            per_node[node] = per_node.get(node, 0) + count
    leaves = [node.split(PATH_SEP)[-1] for node in per_node]
    return _grouped(leaves, list(per_node.values()), "category")


def product_candidates(products: pl.DataFrame, config: AttributeConfiguration) -> list[Candidate]:
    """Product names (the attribute with role ``title``), popularity = products sharing the name."""
    attr = config.by_role(AttributeRole.title)
    if attr is None or attr.name not in products.columns:
        return []
    counts = products[attr.name].drop_nulls().cast(pl.Utf8).value_counts()
    return _grouped(counts[attr.name].to_list(), counts["count"].to_list(), "product")


def query_candidates(log: pl.DataFrame) -> list[Candidate]:
    """Query-log entries (``query``, ``count``), popularity = times searched. Keys are recomputed with
    today's :func:`normalize` (the log's own ``key`` column may predate a change to it)."""
    return _grouped(log["query"].to_list(), log["count"].to_list(), "query")


def deduplicate(candidates: Iterable[Candidate]) -> list[Candidate]:
    """One candidate per key: the preferred type (:data:`TYPE_ORDER`), then the most popular."""
    rank = {t: i for i, t in enumerate(TYPE_ORDER)}
    kept: dict[str, Candidate] = {}
    for c in candidates:
        old = kept.get(c.key)
        if old is None or (rank[c.type], -c.popularity) < (rank[old.type], -old.popularity):
            kept[c.key] = c
    return list(kept.values())


class ResultCheck:
    """Whether searching a text returns products, answered from the tenant's index.

    The check is the pipeline's strict stage without filters: every analysed, non-stop word of the
    text must occur in one product (any searchable field). That is stronger than what the search
    pipeline needs (its relaxed and typo stages accept fewer words), so a text that passes always gets
    results; misspelt log queries ("gas mowe") fail it and are not suggested. About 60 µs per tantivy
    count (Home Depot, 54,667 products); results are memoised per set of terms.
    """

    def __init__(self, index: TenantIndex, stop_words: Iterable[str]) -> None:
        self.index = index
        self.stop = {w.lower() for w in stop_words}
        self.fields = [f"s_{a.name}" for a in index.config.attributes if a.searchable]
        self._memo: dict[tuple[str, ...], int] = {}

    def terms(self, key: str) -> tuple[str, ...]:
        """Analysed terms the pipeline would search for the normalised ``key`` (stop words dropped)."""
        tokens = key.split()
        kept = [t for t in tokens if t not in self.stop] or tokens
        return tuple(sorted(set(self.index.analyze(" ".join(kept)))))

    def hits(self, key: str) -> int:
        """Products matching every term of ``key``."""
        terms = self.terms(key)
        if not terms or not self.fields:
            return 0
        memo = self._memo.get(terms)
        if memo is not None:
            return memo
        schema = self.index.schema
        musts = []
        for term in terms:
            subs = [tantivy.Query.term_query(schema, f, term) for f in self.fields]
            musts.append(
                subs[0]
                if len(subs) == 1
                else tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in subs])
            )
        query = tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in musts])
        count = int(self.index.searcher.search(query, 1, count=True).count or 0)  # type: ignore[attr-defined]
        self._memo[terms] = count
        return count


PROOF_SAMPLE = 64


def checked(
    index: TenantIndex, candidates: Iterable[Candidate], stop_words: Iterable[str]
) -> list[Candidate]:
    """The candidates whose search returns products (:class:`ResultCheck`); queries get their ``hits``.

    A product name needs no query when the title is searchable: the index holds each product's
    ``normalize``-d title, analysed, so the product itself matches every term of its own key. That is
    confirmed with real counts on the first :data:`PROOF_SAMPLE` product names; if any fails (an index
    built differently), every product name is counted.
    """
    check = ResultCheck(index, stop_words)
    title = index.config.by_role(AttributeRole.title)
    own_title = title is not None and title.searchable
    sampled = 0
    kept = []
    for c in candidates:
        if c.type == "product" and own_title and sampled >= PROOF_SAMPLE:
            hits = 1 if check.terms(c.key) else 0
        else:
            hits = check.hits(c.key)
            if c.type == "product" and own_title:
                sampled += 1
                own_title = hits > 0  # a product not found under its own name: count them all
        if hits > 0:
            kept.append(Candidate(c.text, c.key, c.type, c.popularity, hits if c.type == "query" else 0))
    return kept


def catalog_candidates(
    index: TenantIndex, products: pl.DataFrame, enabled: set[SuggestionType], stop_words: Iterable[str]
) -> list[Candidate]:
    """Checked brand, category and product candidates of the enabled types (seconds on 50,000 products:
    normalising the titles and checking them)."""
    found: list[Candidate] = []
    if "brand" in enabled:
        found += brand_candidates(products, index.config)
    if "category" in enabled:
        found += category_candidates(products, index.config)
    if "product" in enabled:
        found += product_candidates(products, index.config)
    return checked(index, found, stop_words)
