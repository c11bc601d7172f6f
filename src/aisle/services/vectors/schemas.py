"""Request and response bodies of the vector search service."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from aisle.core.validation import ExternalId, NumbersChecked
from aisle.search.model import FilterSpec

Kind = Literal["text", "image"]
MAX_BATCH = 1000


class VectorSearchBody(BaseModel):
    """Nearest products to ``text`` (embedded with MiniLM) or to a ``vector``; exactly one of them."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = Field(default=None, max_length=512, examples=["red running shoes"])
    vector: Annotated[list[float], NumbersChecked] | None = Field(default=None, max_length=4096)
    k: int = Field(default=20, ge=1, le=1000, description="Number of neighbours.")
    kind: Kind = Field(default="text", description="Which vectors: product text or product photo.")
    filters: list[FilterSpec] = Field(default_factory=list, max_length=32)
    exclude: list[str] = Field(default_factory=list, max_length=100, description="Product ids to leave out.")

    @model_validator(mode="after")
    def _one_query(self) -> VectorSearchBody:
        if (self.text is None) == (self.vector is None):
            raise ValueError("give exactly one of 'text' and 'vector'")
        return self


class NeighbourOut(BaseModel):
    id: str
    score: float = Field(description="Cosine similarity to the query, -1..1.")


class VectorSearchResponse(BaseModel):
    tenant: str
    kind: Kind
    neighbours: list[NeighbourOut]


class VectorItem(BaseModel):
    """One product to index: its own ``vector``, or a ``text`` to embed (text vectors only)."""

    model_config = ConfigDict(extra="forbid")

    id: ExternalId
    text: str | None = Field(default=None, max_length=4096)
    vector: Annotated[list[float], NumbersChecked] | None = Field(default=None, max_length=4096)

    @model_validator(mode="after")
    def _one_source(self) -> VectorItem:
        if (self.text is None) == (self.vector is None):
            raise ValueError("give exactly one of 'text' and 'vector'")
        return self


class IndexBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Kind = "text"
    items: list[VectorItem] = Field(min_length=1, max_length=MAX_BATCH)


class DeleteBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Kind = "text"
    ids: list[str] = Field(min_length=1, max_length=MAX_BATCH)


class WriteResponse(BaseModel):
    tenant: str
    kind: Kind
    count: int = Field(description="Vectors indexed, or deleted ones that were present.")
    total: int = Field(description="Vectors in the tenant's table after the write.")


class TableInfo(BaseModel):
    kind: Kind
    catalog_version: str
    count: int
    dimension: int


class TenantVectorsInfo(BaseModel):
    tenant: str
    tables: list[TableInfo]
