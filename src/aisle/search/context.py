"""The state one search request carries through the pipeline stages.

The request itself is one frozen :class:`~aisle.search.query.SearchQuery` (``ctx.query``), never
changed; what the stages make of it lives in four typed groups, each written by the stages named:

- :class:`Understanding` (``ctx.understanding``): the text searched, its terms and the attributes
  recognised in it (the rules' rewrite, ``Understand``, ``ExtractAttributes``);
- :class:`Merchandising` (``ctx.merchandising``): what the fired rules do (``MerchandisingRules``,
  ``ApplyRuleActions``, ``PinProducts``);
- :class:`Retrieval` (``ctx.retrieval``): filters, the match query and the candidates later stages read
  (``ApplyFilters``, ``ApplyRuleActions``, ``Retrieve``, ``Hybrid``);
- :class:`Output` (``ctx.output``): the page, the count, facets and the external answer (``Retrieve``,
  ``Hybrid``, ``Rerank``, ``PinProducts``, ``Facets``, ``Fallback``).

``ctx.graph`` is the response's queryGraph, which ``Understand`` makes and every later stage reports to.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import tantivy

from aisle.core.tenancy import TenantConfig
from aisle.search.attributes import PriceConstraint
from aisle.search.external.hydrate import ExternalPage
from aisle.search.hits import Candidates, Hit
from aisle.search.index.reader import TenantIndex
from aisle.search.model import FilterSpec, FollowUp, QueryGraph
from aisle.search.paging import PinPlan
from aisle.search.query import SearchQuery
from aisle.search.rules.book import RuleDraft
from aisle.search.rules.run import RuleRun

__all__ = ["Candidates", "Hit", "Merchandising", "Output", "Retrieval", "SearchContext", "Understanding"]


@dataclass
class Understanding:
    """What query understanding made of the text.

    ``text`` is the text searched: the shopper's, or a fired rule's rewrite. ``term_groups`` holds, per
    query term, the analysed alternatives any of which satisfies it (the term itself, its spelling
    correction, its synonyms). ``match_terms`` is the analysed query as attribute extraction reads it:
    corrections applied, and a synonym's form that names a catalog value preferred ("sneakers" read as
    "sports shoes"). ``extracted`` holds one query per attribute or price constraint recognised in the
    query, with its boost (filters when strict, boosts after); ``price`` the price constraint.
    ``fragments`` holds the analysed letter groups of under three letters the normaliser split from
    digits in one typed word (``dw`` of ``dw988``, ``kj`` of ``8f3a2kj``): part of a model number,
    never a word of their own (:func:`aisle.search.stages.retrieve.weak`). ``prefix`` is, for a search
    as you type (``SearchQuery.prefix``), the term group of the unfinished last word and that word as
    typed (normalised): retrieval also matches the words beginning with it.
    """

    text: str
    terms: list[str] = field(default_factory=list)
    term_groups: list[list[str]] = field(default_factory=list)
    match_terms: list[str] = field(default_factory=list)
    fragments: set[str] = field(default_factory=set)
    prefix: tuple[int, str] | None = None
    extracted: list[tuple[tantivy.Query, float]] = field(default_factory=list)
    price: PriceConstraint | None = None


@dataclass
class Merchandising:
    """What the fired merchandising rules do to this search.

    ``rules`` is the rules that fired; ``boosts`` (merchandising boost, weight > 0, or bury, weight < 0)
    apply in every retrieval stage; ``exclude_query`` matches products never to return (hidden or
    pinned); ``redirect`` the first redirect; ``pins`` the page plan when a rule pins products.
    """

    rules: RuleRun | None = None
    boosts: list[tuple[tantivy.Query, float]] = field(default_factory=list)
    exclude_query: tantivy.Query | None = None
    redirect: str | None = None
    pins: PinPlan | None = None


@dataclass
class Retrieval:
    """Filters, matches and candidates.

    ``filters`` are the request's plus the fired rules' (attribute extraction leaves their fields
    alone), ``filter_query`` all of them as one query, ``category_level`` the level below the deepest
    category filter per attribute (its facet counts there). ``match_query`` selects every match of the
    retrieval stage that answered. ``candidate_depth`` is how many relevance-ordered lexical hits later
    stages read (the hybrid stage, the learned ranker), set before the stages run; retrieval then
    fetches that many in its one search and keeps them in ``lexical``
    (:func:`~aisle.search.stages.retrieve.lexical_candidates` reads them). ``candidates_reranked``
    says a learned ranker will reorder ``candidates`` (what the hybrid stage fused), so the hybrid stage
    hands it every candidate, even those that could not reach the page by fusion. ``vector_only``
    counts the products in the total that hybrid retrieval added without any query term matching.
    ``lean_match`` is ``(match_query as retrieval set it, a query matching the same products without
    the scoring parts)``: facet counting uses the second while ``match_query`` is still the first.
    ``stock_tiers`` are the stock policy's order: conditions with weights, products meeting more weight
    first (:mod:`aisle.search.stages.stock`; empty: no order).
    """

    filters: list[FilterSpec] = field(default_factory=list)
    filter_query: tantivy.Query | None = None
    category_level: dict[str, int] = field(default_factory=dict)
    match_query: tantivy.Query | None = None
    lean_match: tuple[tantivy.Query, tantivy.Query] | None = None
    candidate_depth: int = 0
    candidates_reranked: bool = False
    lexical: Candidates | None = None
    candidates: Candidates | None = None
    vector_only: int = 0
    stock_tiers: list[tuple[tantivy.Query, float]] = field(default_factory=list)


@dataclass
class Output:
    """What the response is made of: the page's ``hits``, the ``total`` of matches, ``facet_counts``
    (name -> (value, count)), ``external`` the page the fallback stage got from the tenant's external
    search service, ``stage_error`` the exception of an Aisle stage the fallback answers for.

    ``value_counts`` holds the counts of every attribute the facets stage counted, the requested facets
    and those a later stage asked it for (the follow-up question's candidates), in the same shape;
    ``follow_up`` the question the answer asks, if any; ``named_product`` why the query names a product
    (:func:`aisle.search.stages.follow_up.names_product`), once ``named_checked``."""

    hits: list[Hit] = field(default_factory=list)
    total: int = 0
    facet_counts: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    value_counts: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    follow_up: FollowUp | None = None
    named_product: str | None = None
    named_checked: bool = False
    external: ExternalPage | None = None
    stage_error: Exception | None = None


@dataclass
class SearchContext:
    """Input, intermediate and output state of one search (see the module docstring).

    Stages read what earlier stages produced and add their own part; none reaches back. ``offset`` and
    ``size`` of ``query`` always stay the shopper's page; stages cut results by :meth:`window`.
    ``deadline`` is a ``time.perf_counter()`` instant after which optional work is skipped.
    ``draft_rules`` is a rule set replacing the tenant's live rules for this search only (a
    merchandiser's preview, or an experiment's variant). ``ranker_version`` is a learned ranker version
    replacing the tenant's live one (an experiment's variant; None: the live one).
    """

    index: TenantIndex
    config: TenantConfig
    query: SearchQuery
    deadline: float = field(default_factory=lambda: time.perf_counter() + 0.5)
    started: float = field(default_factory=time.perf_counter)
    draft_rules: RuleDraft | None = None
    ranker_version: int | None = None
    graph: QueryGraph | None = None
    understanding: Understanding = field(default_factory=lambda: Understanding(""))
    merchandising: Merchandising = field(default_factory=Merchandising)
    retrieval: Retrieval = field(default_factory=Retrieval)
    output: Output = field(default_factory=Output)

    @classmethod
    def start(
        cls,
        index: TenantIndex,
        config: TenantConfig,
        query: SearchQuery,
        *,
        budget_s: float = 0.5,
        draft_rules: RuleDraft | None = None,
        ranker_version: int | None = None,
    ) -> SearchContext:
        """A fresh context for one search of ``query``, due ``budget_s`` seconds from now."""
        now = time.perf_counter()
        return cls(
            index=index,
            config=config,
            query=query,
            deadline=now + budget_s,
            started=now,
            draft_rules=draft_rules,
            ranker_version=ranker_version,
            understanding=Understanding(query.text),
            retrieval=Retrieval(filters=list(query.filters)),
        )

    def past_deadline(self) -> bool:
        return time.perf_counter() > self.deadline

    def window(self) -> tuple[int, int]:
        """(offset, size) of the results the retrieval stages fetch: the page, less any pins on it."""
        pins = self.merchandising.pins
        return pins.organic() if pins is not None else (self.query.offset, self.query.size)

    def reorders_within(self, limit: int) -> bool:
        """Whether a stage may reorder this search's page among the first ``limit`` matches: a
        relevance-sorted text query that matched, whose page lies within them, before the deadline."""
        offset, size = self.window()
        return (
            self.query.sort == "relevance"
            and bool(self.understanding.term_groups)
            and size > 0
            and self.retrieval.match_query is not None
            and offset + size <= limit
            and not self.past_deadline()
        )
