"""Resources of one rules-service process, and the dependency routes reach them through."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from aisle.core.config import Settings
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.search.indexes import IndexRegistry
from aisle.search.rules.book import RuleBooks


@dataclass
class RulesState:
    """Resources of one rules-service process (``app.state.rules``; its Authorizer: ``app.state.authorizer``).

    ``indexes`` serve validation (filter values, product ids) and previews; ``books`` the live rules
    a preview starts from.
    """

    settings: Settings
    store: BlobStore
    tenants: Tenants
    indexes: IndexRegistry
    books: RuleBooks


async def rules_state(request: Request) -> RulesState:
    return request.app.state.rules  # type: ignore[no-any-return]


State = Annotated[RulesState, Depends(rules_state)]
"""A route parameter typed ``State`` receives the process's :class:`RulesState`."""
