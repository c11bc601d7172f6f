"""Where a merchandiser lands after signing in: the tenants their token may see, a line each.

A token for one tenant goes straight to its rules. With several, ``/console/`` lists them; each line
loads its figures on its own (htmx, ``/console/<tenant>/summary``), so the list shows at once however
many tenants there are and a slow or broken tenant holds up only its own line. The figures come from the
APIs with the session's token, as every page's: products from the live search (an empty query, none
shown: ``POST /rules/preview``, needs ``search:read``), rules from the rules API (how many are enabled)
and the experiments running (the experiments API).
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from aisle.core.error_codes import ErrorCode
from aisle.services.rules.console.api import Api
from aisle.services.rules.console.frame import api, render
from aisle.services.rules.console.session import Session

router = APIRouter(include_in_schema=False)


@router.get("/console/")
async def home(request: Request, session: Session) -> Response:
    """The tenant chooser; a token for a single tenant goes straight to its rules."""
    if not session.tenants:
        return render(request, "login.html", error="this token names no tenant", nonce="", auth_on=True)
    if len(session.tenants) == 1:
        return RedirectResponse(f"/console/{session.tenants[0]}/rules", status_code=303)
    return render(request, "tenants.html", session=session, tenant=None, tenants=session.tenants)


async def _products(client: Api, tenant: str, allowed: bool) -> int | None:
    if not allowed:
        return None
    reply = await client.rules("POST", "/rules/preview", tenant, json={"search": {"query": "", "size": 0}})
    return int(reply.body["withoutRule"]["total"]) if reply.ok else None


async def _rules(client: Api, tenant: str) -> dict[str, int] | str:
    """``{total, enabled}``, or the API's error code."""
    reply = await client.all_rules(tenant)
    if not reply.ok:
        return reply.code
    rules = reply.body["rules"]
    return {"total": len(rules), "enabled": sum(1 for r in rules if r.get("enabled"))}


async def _running(client: Api, tenant: str) -> list[dict[str, Any]] | None:
    reply = await client.rules("GET", "/experiments", tenant)
    if not reply.ok:
        return None
    return [e for e in reply.body["experiments"] if e["status"] == "running"]


@router.get("/console/{tenant}/summary")
async def summary(request: Request, session: Session, tenant: str) -> Response:
    """One tenant's line of the chooser: products, rules (enabled), experiments running."""
    session.require_tenant(tenant)
    client = api(request, session)
    products, rules, running = await asyncio.gather(
        _products(client, tenant, session.can_search), _rules(client, tenant), _running(client, tenant)
    )
    missing = rules == ErrorCode.TENANT_NOT_FOUND  # named by the token, not (yet) in storage
    return render(
        request,
        "tenant_line.html",
        session=session,
        tenant=tenant,
        products=products,
        rules=rules if isinstance(rules, dict) else None,
        running=running,
        missing=missing,
    )
