"""The resources of one edit process, kept in ``app.state.edit`` and reached through :mod:`.deps`."""

from __future__ import annotations

from dataclasses import dataclass

from aisle.core.auth.dependencies import Authorizer
from aisle.core.config import Settings
from aisle.core.events import EventStore
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.recs.jobs import JobRunner


@dataclass
class EditState:
    """Resources of one edit process (``app.state.edit``)."""

    settings: Settings
    store: BlobStore
    tenants: Tenants
    events: EventStore
    jobs: JobRunner
    authorizer: Authorizer
