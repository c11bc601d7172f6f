"""What the vector service's routes reach through a dependency."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from aisle.core.config import Settings
from aisle.core.tenancy import Tenants
from aisle.vectors.neighbours import LocalNeighbours
from aisle.vectors.search import VectorSearch
from aisle.vectors.store import VectorStore


@dataclass
class VectorState:
    """Resources of one vector-service process (``request.app.state.vectors``): the tenants, their
    vector tables, the text encoder, and neighbours within the search filters (evaluated with each
    tenant's full-text index)."""

    settings: Settings
    tenants: Tenants
    store: VectorStore
    search: VectorSearch
    neighbours: LocalNeighbours


async def _state(request: Request) -> VectorState:
    return request.app.state.vectors


State = Annotated[VectorState, Depends(_state)]
