"""Bodies the search service and the catalog-search proxy service share: the proxy answers the search
service's requests with the same shapes (interface spec, "Search request" and ``GET /suggestions``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from aisle.core.stock import STORE_ID_PATTERN
from aisle.search.model import FilterSpec, SortOrder
from aisle.search.query import SearchQuery
from aisle.services.common.params import TENANT_PATTERN


class SearchRequest(BaseModel):
    """Body of ``POST /search`` (spec "Search request")."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    query: str = Field(
        max_length=512,
        description="Natural language search query; empty browses everything.",
        examples=["red nike running shoes"],
    )
    tenant: str = Field(pattern=TENANT_PATTERN, description="Tenant identifier.", examples=["fashion"])
    size: int = Field(default=20, ge=0, le=100, description="Number of results (at most 100).")
    from_: int = Field(default=0, ge=0, le=10_000, alias="from", description="Pagination offset.")
    filters: list[FilterSpec] = Field(default_factory=list, max_length=32)
    facets: list[str] = Field(default_factory=list, max_length=16, examples=[["brand", "color", "price"]])
    sort: SortOrder = "relevance"
    user_group: str | None = Field(
        default=None,
        alias="userGroup",
        max_length=64,
        description="The shopper's user group (user_group_configuration.json); rules may target it.",
    )
    visitor_id: str | None = Field(
        default=None,
        alias="visitorId",
        max_length=128,
        description="The shopper's visitor id: assigns A/B experiment variants (stable per visitor), and "
        "goes to the tenant's external search service (crs_config.json).",
    )
    store_id: str | None = Field(
        default=None,
        alias="storeId",
        pattern=STORE_ID_PATTERN,
        description="The shopper's store: with the tenant's stock setting `store` = `filter` (the default) "
        "only products that store has in stock (its inventory, PUT /products/{id}/inventory/{storeId}); "
        "with `boost`, that store's products first. Ignored by an external search service.",
        examples=["store-12"],
    )

    ignore_understood: list[Annotated[str, Field(max_length=64)]] = Field(
        default_factory=list,
        alias="ignoreUnderstood",
        max_length=16,
        description="Attributes the query's words name that this search must not filter or boost by "
        "(queryGraph.attributes lists them; the price attribute for a price phrase such as 'under 2000'): "
        "the storefront sends one when the shopper removes its chip. Unknown names are ignored.",
        examples=[["color"]],
    )
    prefix: bool = Field(
        default=False,
        description="Search as you type: the last word, unless a space follows it, also matches the "
        "words beginning with it ('cordless dr' finds drills), as Typesense's `prefix` and Algolia's "
        "`prefixLast`. The storefront's search box sends true. Default false.",
    )
    follow_up: bool = Field(
        default=True,
        alias="followUp",
        description="false: ask no guided-search question (`followUp` in the answer), for a client that "
        "cannot show one. Default true: the tenant's `follow_up` settings decide.",
    )
    analytics: bool = Field(
        default=True,
        description="false for a page's helper queries (facet counts without a refinement, price bounds): "
        "the answer is not recorded in analytics and has no attributionToken. Default true.",
    )

    def search_query(self) -> SearchQuery:
        """Everything but the tenant, as the engine takes it (the one :class:`SearchQuery`)."""
        return SearchQuery(
            text=self.query,
            size=self.size,
            offset=self.from_,
            filters=self.filters,
            facets=self.facets,
            sort=self.sort,
            user_group=self.user_group,
            visitor_id=self.visitor_id,
            store_id=self.store_id,
            prefix=self.prefix,
            ignore_understood=self.ignore_understood,
            follow_up=self.follow_up,
        )


class SuggestionItem(BaseModel):
    """One suggestion of the ranked list (spec: ``{suggestion: string, type: string}``)."""

    suggestion: str = Field(description="Text to show and to search.", examples=["Nike"])
    type: Literal["query", "brand", "category", "product"] = Field(
        description="Where it comes from: a past search (query), a brand, a category name, a product name.",
        examples=["brand"],
    )
