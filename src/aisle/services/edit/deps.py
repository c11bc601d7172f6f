"""FastAPI dependencies of the edit service: its engines and the tenant check, read from ``app.state``.

:func:`edit_engine` and :func:`behaviour_engine` are ``async`` because they only read
``request.app.state.edit`` (a plain ``def`` dependency would be handed to a thread);
:func:`known_tenant` reads storage, so it is a plain ``def``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from aisle.behaviour.engine import BehaviourEngine
from aisle.recs.editing import RecsEditor
from aisle.services.common.params import TenantQuery
from aisle.services.edit.state import EditState


def edit_state(request: Request) -> EditState:
    """The process's :class:`EditState` (set by ``create_app``)."""
    state: EditState = request.app.state.edit
    return state


async def edit_engine(request: Request) -> RecsEditor:
    return edit_state(request).editor


async def behaviour_engine(request: Request) -> BehaviourEngine:
    return edit_state(request).behaviour


def known_tenant(request: Request, tenant: TenantQuery) -> str:
    """The request's ``tenant``, checked before the body is (an unknown tenant is a 404 even with a bad
    body). Raises TenantNotFound (404)."""
    edit_state(request).editor.scope(tenant)
    return tenant


Editor = Annotated[RecsEditor, Depends(edit_engine)]
"""The process's :class:`RecsEditor`: models, jobs, containers, events and user features."""
Behaviour = Annotated[BehaviourEngine, Depends(behaviour_engine)]
"""The process's :class:`BehaviourEngine`: shopper events in (``POST /events``) and the job kinds that
learn from them."""
KnownTenant = Annotated[str, Depends(known_tenant)]
"""The request's ``tenant``, which must exist (404 otherwise)."""
