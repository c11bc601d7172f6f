"""The state one search request carries through the pipeline stages."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import tantivy

from aisle.core.tenancy import TenantConfig
from aisle.search.attributes import PriceConstraint
from aisle.search.index.reader import TenantIndex
from aisle.search.model import FilterSpec, QueryGraph, SortOrder


@dataclass(slots=True)
class Hit:
    """One matching product: catalog row number and relevance score (or sort key)."""

    ord: int
    score: float


@dataclass(slots=True)
class Candidates:
    """The candidate list a learned ranker reorders: catalog rows with their retrieval signals.

    ``ords`` (n,) int64 catalog rows; ``lexical`` (n,) float32 score of the lexical stage that answered
    (NaN for products only the vector search found); ``cosine`` (n,) float32 MiniLM cosine to the query
    (NaN when the tenant has no vectors or the product has none); ``vectors`` (n, d) float32 the
    products' unit embeddings (zero rows for products without one), or None without vectors.
    Lexical candidates come first, in lexical order.
    """

    ords: np.ndarray
    lexical: np.ndarray
    cosine: np.ndarray
    vectors: np.ndarray | None = None


@dataclass
class SearchContext:
    """Input, intermediate and output state of one search.

    Stages read what earlier stages produced and add their own part; none reaches back.
    ``term_groups`` holds, per query term, the analysed alternatives any of which satisfies it
    (the term itself, its spelling correction, its synonyms). ``match_terms`` is the analysed query as
    attribute extraction reads it: corrections applied, and a synonym's form that names a catalog
    value preferred ("sneakers" read as "sports shoes"). ``extracted`` holds one query
    per attribute or price constraint recognised in the query, with its boost (filters when strict,
    boosts after). ``boosts`` (merchandising boost, weight > 0, or bury, weight < 0) apply in every
    stage; ``exclude_query`` matches products never to return (hidden by a rule).
    ``candidates`` is what the hybrid stage fused (for the learned ranker).
    ``deadline`` is a ``time.perf_counter()`` instant after which optional work is skipped.
    """

    index: TenantIndex
    config: TenantConfig
    query: str
    size: int = 20
    offset: int = 0
    filters: list[FilterSpec] = field(default_factory=list)
    facets: list[str] = field(default_factory=list)
    sort: SortOrder = "relevance"
    deadline: float = field(default_factory=lambda: time.perf_counter() + 0.5)
    started: float = field(default_factory=time.perf_counter)
    graph: QueryGraph | None = None
    terms: list[str] = field(default_factory=list)
    term_groups: list[list[str]] = field(default_factory=list)
    match_terms: list[str] = field(default_factory=list)
    extracted: list[tuple[tantivy.Query, float]] = field(default_factory=list)
    price: PriceConstraint | None = None
    user_group: str | None = None
    boosts: list[tuple[tantivy.Query, float]] = field(default_factory=list)
    exclude_query: tantivy.Query | None = None
    redirect: str | None = None
    rules_state: object | None = None  # the merchandising stages' per-request state (stages/rules.py)
    filter_query: tantivy.Query | None = None
    match_query: tantivy.Query | None = None
    hits: list[Hit] = field(default_factory=list)
    candidates: Candidates | None = None
    total: int = 0
    facet_counts: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    category_level: dict[str, int] = field(default_factory=dict)

    def past_deadline(self) -> bool:
        return time.perf_counter() > self.deadline

    def reorders_within(self, limit: int) -> bool:
        """Whether a stage may reorder this search's page among the first ``limit`` matches: a
        relevance-sorted text query that matched, whose page lies within them, before the deadline."""
        return (
            self.sort == "relevance"
            and bool(self.term_groups)
            and self.size > 0
            and self.match_query is not None
            and self.offset + self.size <= limit
            and not self.past_deadline()
        )
