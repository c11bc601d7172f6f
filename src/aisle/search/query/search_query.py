"""The one value a search is asked as: what the shopper searches, which page, filters, facets, order.

Every entry builds or derives a :class:`SearchQuery` (the HTTP routes and their fast lane, rule
previews, semantic search, category counts, the external adapters' requests, offline evaluation), and
the search pipeline receives it; stages read it from ``SearchContext.query`` and never change it (what
they make of it goes in the context's groups). Like meilisearch's ``milli::Search``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aisle.search.model import FilterSpec, SortOrder


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """One search of one tenant (the tenant itself is the engine's first argument).

    Attributes:
        text: the shopper's query (empty: browse everything), at most 512 characters at the HTTP door.
        size: products on the page, 0..100 (0: count and facets only).
        offset: products skipped before the page (the spec's ``from``).
        filters: per field a value, values (OR) or a numeric range; fields AND together.
        facets: attribute names to count over all matches, in order, each once.
        sort: ``relevance``, ``price_asc`` or ``price_desc``.
        user_group: the shopper's user group (``user_group_configuration.json``); rules may target it.
        visitor_id: the shopper as the tenant's external search service knows them (``crs_config.json``),
            and the unit A/B experiments assign a variant to (:mod:`aisle.search.experiments`).
        store_id: the shopper's store (:data:`aisle.core.stock.STORE_ID_PATTERN`): the tenant's ``stock``
            ``store`` setting filters by or boosts what that store has in stock
            (:mod:`aisle.search.stages.stock`).
        ignore_understood: attributes (by name; the price attribute for a price phrase) the query's words
            name that the search must not filter or boost by: a shopper removing a storefront chip
            ("Colour: Red" for "red shirt") searches the words without that reading.
        prefix: the last word may be unfinished (search as you type): it also matches the words that
            begin with it, unless the text ends with a space (Typesense's ``prefix``, Algolia's
            ``prefixLast``). Off by default; the storefront's search box turns it on.
        follow_up: false asks no guided-search question (a client that cannot show one: an API
            integration, a page's helper query); the tenant's ``follow_up`` settings apply otherwise.

    ``filters`` and ``facets`` are kept as tuples (any sequence is taken); a repeated facet counts once.
    """

    text: str = ""
    size: int = 20
    offset: int = 0
    filters: Sequence[FilterSpec] = ()
    facets: Sequence[str] = ()
    sort: SortOrder = "relevance"
    user_group: str | None = None
    visitor_id: str | None = None
    store_id: str | None = None
    prefix: bool = False
    ignore_understood: Sequence[str] = ()
    follow_up: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "filters", tuple(self.filters))
        object.__setattr__(self, "ignore_understood", tuple(self.ignore_understood))
        object.__setattr__(self, "facets", tuple(dict.fromkeys(self.facets)))
