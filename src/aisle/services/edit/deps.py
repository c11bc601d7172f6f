"""FastAPI dependencies of the edit service: its resources and the token check, read from ``app.state``.

The getters are ``async`` because they only read ``request.app.state.edit`` (a plain ``def`` dependency
would be handed to a thread); :func:`tenant_scope` reads storage, so it is a plain ``def``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from aisle.core.events import EventStore
from aisle.core.storage import PrefixBlobStore
from aisle.core.tenancy import Tenants
from aisle.recs.jobs import JobRunner
from aisle.services.common.params import TenantQuery
from aisle.services.edit.state import EditState


def edit_state(request: Request) -> EditState:
    """The process's :class:`EditState` (set by ``create_app``)."""
    state: EditState = request.app.state.edit
    return state


async def edit_tenants(request: Request) -> Tenants:
    return edit_state(request).tenants


async def edit_events(request: Request) -> EventStore:
    return edit_state(request).events


async def edit_jobs(request: Request) -> JobRunner:
    return edit_state(request).jobs


def tenant_scope(request: Request, tenant: TenantQuery) -> PrefixBlobStore:
    """The tenant's storage scope. Raises TenantNotFound (404) for an unknown tenant."""
    tenants = edit_state(request).tenants
    tenants.config(tenant)
    return tenants.scope(tenant)


AllTenants = Annotated[Tenants, Depends(edit_tenants)]
"""Every tenant's configuration and scope (the route names the tenant)."""
Events = Annotated[EventStore, Depends(edit_events)]
"""The visitor events and user features of every tenant."""
Jobs = Annotated[JobRunner, Depends(edit_jobs)]
"""This replica's job runner (woken after a local submit)."""
Scope = Annotated[PrefixBlobStore, Depends(tenant_scope)]
"""The storage scope of the request's ``tenant``, which must exist (404 otherwise)."""
