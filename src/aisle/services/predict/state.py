"""The resources of one predict process, kept in ``app.state.predict`` and reached through :mod:`.deps`."""

from __future__ import annotations

from dataclasses import dataclass

from aisle.core.auth.dependencies import Authorizer
from aisle.core.config import Settings
from aisle.core.events import EventStore
from aisle.core.tenancy import Tenants
from aisle.recs.serving import PredictEngine


@dataclass
class PredictState:
    """Resources of one predict process (``app.state.predict``)."""

    settings: Settings
    tenants: Tenants
    events: EventStore
    engine: PredictEngine
    authorizer: Authorizer
