"""The state one search request carries through the pipeline stages."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import tantivy

from aisle.core.tenancy import TenantConfig
from aisle.search.attributes import PriceConstraint
from aisle.search.external.hydrate import ExternalPage
from aisle.search.hits import Candidates, Hit
from aisle.search.index.reader import TenantIndex
from aisle.search.model import FilterSpec, QueryGraph, SortOrder
from aisle.search.paging import PinPlan
from aisle.search.rules.book import RuleDraft
from aisle.search.rules.run import RuleRun

__all__ = ["Candidates", "Hit", "SearchContext"]


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
    ``candidates`` is what the hybrid stage fused (for the learned ranker). ``candidate_depth`` is how
    many relevance-ordered lexical hits later stages read (the hybrid stage, the learned ranker), set
    before the stages run; retrieval then fetches that many in its one search and keeps them in
    ``lexical`` (:func:`~aisle.search.stages.retrieve.lexical_candidates` reads them);
    ``candidates_reranked`` says a learned ranker will reorder ``candidates`` (so the hybrid stage
    hands it every candidate, even those that could not reach the page by fusion). ``rules`` is what the
    merchandising stages share (the rules that fired), ``pins`` the page plan when a rule pins products:
    ``offset``/``size`` always stay the shopper's page, stages cut results by :meth:`window`.
    ``deadline`` is a ``time.perf_counter()`` instant after which optional work is skipped.
    ``vector_only`` counts the products in ``total`` that hybrid retrieval added without any query term
    matching. ``visitor_id`` is the shopper as the external search service knows them; ``external``
    the page the fallback stage got from it, ``stage_error`` the exception of an Aisle stage the
    fallback answers for.
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
    rules: RuleRun | None = None
    pins: PinPlan | None = None
    filter_query: tantivy.Query | None = None
    match_query: tantivy.Query | None = None
    hits: list[Hit] = field(default_factory=list)
    candidates: Candidates | None = None
    candidate_depth: int = 0
    candidates_reranked: bool = False
    lexical: Candidates | None = None
    total: int = 0
    facet_counts: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    category_level: dict[str, int] = field(default_factory=dict)
    visitor_id: str | None = None
    vector_only: int = 0
    external: ExternalPage | None = None
    stage_error: Exception | None = None
    draft_rules: RuleDraft | None = None

    @classmethod
    def start(
        cls,
        index: TenantIndex,
        config: TenantConfig,
        query: str,
        *,
        size: int,
        offset: int,
        filters: list[FilterSpec] | None,
        facets: list[str] | None,
        sort: SortOrder,
        user_group: str | None = None,
        visitor_id: str | None = None,
        budget_s: float = 0.5,
    ) -> SearchContext:
        """A fresh context for one search, due ``budget_s`` seconds from now; facets de-duplicated."""
        now = time.perf_counter()
        return cls(
            index=index,
            config=config,
            query=query,
            size=size,
            offset=offset,
            filters=list(filters or []),
            facets=list(dict.fromkeys(facets or [])),
            sort=sort,
            user_group=user_group,
            visitor_id=visitor_id,
            deadline=now + budget_s,
            started=now,
        )

    def past_deadline(self) -> bool:
        return time.perf_counter() > self.deadline

    def window(self) -> tuple[int, int]:
        """(offset, size) of the results the retrieval stages fetch: the page, less any pins on it."""
        return self.pins.organic() if self.pins is not None else (self.offset, self.size)

    def reorders_within(self, limit: int) -> bool:
        """Whether a stage may reorder this search's page among the first ``limit`` matches: a
        relevance-sorted text query that matched, whose page lies within them, before the deadline."""
        offset, size = self.window()
        return (
            self.sort == "relevance"
            and bool(self.term_groups)
            and size > 0
            and self.match_query is not None
            and offset + size <= limit
            and not self.past_deadline()
        )
