"""Request and response bodies of the search service (interface spec, "Search service")."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from aisle.search.model import FacetValue, FilterSpec
from aisle.services.common.params import TENANT_PATTERN
from aisle.services.common.search_schemas import SearchRequest as SearchRequest  # shared with the proxy


class ItemsPage(BaseModel):
    """A page of catalog products (``GET /items``)."""

    items: list[dict[str, Any]]
    total: int
    from_: int = Field(alias="from")
    size: int


class TenantList(BaseModel):
    tenants: list[str]


class CategoriesRequest(BaseModel):
    """Body of ``POST /categories``: the children of ``parent`` (top level when omitted), with counts."""

    model_config = ConfigDict(extra="forbid")

    tenant: str = Field(pattern=TENANT_PATTERN, examples=["fashion"])
    parent: str | None = Field(default=None, max_length=512, examples=["Footwear"])
    field: str | None = Field(
        default=None, description="Category attribute; default: the one with role category."
    )
    query: str | None = Field(
        default=None, max_length=512, description="Count only products matching this query."
    )
    filters: list[FilterSpec] = Field(default_factory=list, max_length=32)


class CategoryCount(BaseModel):
    name: str = Field(description="Last level of the path, e.g. 'Shoes'.")
    path: str = Field(description="Full path, usable as a filter value, e.g. 'Footwear > Shoes'.")
    count: int


class CategoriesResponse(BaseModel):
    field: str
    parent: str | None
    categories: list[CategoryCount]


class CategoryLevelsRequest(BaseModel):
    """Body of ``POST /categories/levels``: the category tree down to ``depth`` levels."""

    model_config = ConfigDict(extra="forbid")

    tenant: str = Field(pattern=TENANT_PATTERN, examples=["fashion"])
    depth: int = Field(default=3, ge=1, le=4)
    field: str | None = None


class CategoryNode(BaseModel):
    name: str
    path: str
    count: int
    children: list[CategoryNode] = Field(default_factory=list)


class CategoryLevel(BaseModel):
    level: int
    values: list[FacetValue]


class CategoryLevelsResponse(BaseModel):
    field: str
    levels: list[CategoryLevel]
    tree: list[CategoryNode]
