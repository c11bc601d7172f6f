"""What the analytics service's routes reach through a dependency."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from aisle.analytics.engine import AnalyticsEngine
from aisle.core.config import Settings
from aisle.core.tenancy import Tenants


@dataclass
class AnalyticsState:
    """Resources of one analytics-service process (``request.app.state.analytics``)."""

    settings: Settings
    tenants: Tenants
    engine: AnalyticsEngine


async def _state(request: Request) -> AnalyticsState:
    return request.app.state.analytics  # type: ignore[no-any-return]


State = Annotated[AnalyticsState, Depends(_state)]
