"""Resources of one rules-service process, and the dependency routes reach them through."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request

from aisle.catalog.history import ChangeHistory
from aisle.catalog.writer import CatalogWriter
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
    ``catalog`` is the product writes' front door on the same bucket (the console's product page; the
    search service's compaction makes its writes searchable) and ``history`` reads products' changes
    from the change log.
    """

    settings: Settings
    store: BlobStore
    engine: SearchEngine
    experiments: ExperimentAdmin
    catalog: CatalogWriter = field(init=False)
    history: ChangeHistory = field(init=False)

    def __post_init__(self) -> None:
        self.catalog = CatalogWriter(self.engine.tenants)
        self.history = ChangeHistory(self.engine.tenants)

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
