"""Resources of one rules-service process, and the dependency routes reach them through."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from aisle.core.config import Settings
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.experiments.admin import ExperimentAdmin
from aisle.search.engine import SearchEngine
from aisle.search.indexes import IndexRegistry


@dataclass
class RulesState:
    """Resources of one rules-service process (``app.state.rules``; its Authorizer: ``app.state.authorizer``).

    ``engine`` is a search engine like the search service's (same stages, vectors, rankers, fallback
    and deadline): previews run its live pipeline with a draft rule set. Its ``indexes`` also serve
    validation (filter values, product ids). ``experiments`` is the front door of the A/B experiments
    of both surfaces (their results read from the analytics log, which this process never writes).
    """

    settings: Settings
    store: BlobStore
    engine: SearchEngine
    experiments: ExperimentAdmin

    @property
    def tenants(self) -> Tenants:
        return self.engine.tenants

    @property
    def indexes(self) -> IndexRegistry:
        return self.engine.indexes


async def rules_state(request: Request) -> RulesState:
    return request.app.state.rules  # type: ignore[no-any-return]


State = Annotated[RulesState, Depends(rules_state)]
"""A route parameter typed ``State`` receives the process's :class:`RulesState`."""
