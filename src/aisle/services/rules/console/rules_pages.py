"""Console pages for search rules: list and search, the editor, enable/disable, delete, history, revert.

Every change goes through the rules API with the merchandiser's token (:class:`.api.Api`): a 403 for
a read-only token, a 409 for a stale version and a 422 for bad input come back from the API and are
shown where they belong; nothing is written unless the API accepted it.
"""

from __future__ import annotations

import difflib
import json
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, Response

from aisle.services.rules.console.frame import api, page, redirect, render
from aisle.services.rules.console.rule_form import (
    ACTION_TYPES,
    QUERY_MATCHES,
    blank_action,
    errors_by_field,
    field_types,
    parse_rule_form,
)
from aisle.services.rules.console.session import ConsoleSession, Session

router = APIRouter(include_in_schema=False)
NEW_RULE: dict[str, Any] = {
    "name": "",
    "description": "",
    "priority": 0,
    "enabled": True,
    "appliesToAllQueries": False,
    "conditions": {"query": {"match": "contains", "value": ""}},
    "actions": [],
}


def new_key() -> str:
    return secrets.token_hex(4)


def editor_context(request: Request, tenant: str) -> dict[str, Any]:
    """What every editor render needs: the tenant's filterable fields and user groups."""
    config = request.app.state.rules.tenants.config(tenant)
    return {
        "fields": field_types(config),
        "user_groups": [g.id for g in config.user_groups.groups],
        "action_types": ACTION_TYPES,
        "query_matches": QUERY_MATCHES,
    }


def matches(rule: dict[str, Any], text: str) -> bool:
    """Whether the list's search box text appears in the rule's id, name, description or query value."""
    text = text.casefold()
    hay = [
        rule["id"],
        rule["name"],
        rule.get("description", ""),
        rule["conditions"]["query"].get("value") or "",
    ]
    return any(text in str(h).casefold() for h in hay)


@router.get("/console/{tenant}/rules")
async def rule_list(
    request: Request, session: Session, tenant: str, q: str = "", state: str = "all"
) -> Response:
    session.require_tenant(tenant)
    reply = await api(request, session).all_rules(tenant)
    rules = reply.body["rules"] if reply.ok else []
    if q.strip():
        rules = [r for r in rules if matches(r, q.strip())]
    if state in ("enabled", "disabled"):
        rules = [r for r in rules if r["enabled"] == (state == "enabled")]
    error = None if reply.ok else reply.message
    return page(request, session, tenant, "rules.html", rules=rules, q=q, state=state, error=error)


def editor(
    request: Request,
    session: ConsoleSession,
    tenant: str,
    rule: dict[str, Any],
    *,
    rule_id: str | None,
    version: int | None,
    keys: list[str] | None = None,
    status_code: int = 200,
    **extra: Any,
) -> HTMLResponse:
    """The rule editor page (also re-rendered, with the merchandiser's input, after a refused save)."""
    keys = keys or [new_key() for _ in rule.get("actions", [])]
    response = page(
        request,
        session,
        tenant,
        "rule_edit.html",
        rule=rule,
        rule_id=rule_id,
        version=version,
        keys=keys,
        errors=extra.pop("errors", {}),
        **editor_context(request, tenant),
        **extra,
    )
    response.status_code = status_code
    return response


@router.get("/console/{tenant}/rules/new")
async def new_rule(request: Request, session: Session, tenant: str, query: str = "") -> Response:
    """A blank rule; ``?query=`` starts it on that exact query (the Analytics page's no-result list)."""
    rule = NEW_RULE
    if query.strip():
        rule = {**NEW_RULE, "name": f"Query: {query.strip()}"[:120],
                "conditions": {"query": {"match": "exact", "value": query.strip()}}}  # fmt: skip
    return editor(request, session, tenant, rule, rule_id=None, version=None)


@router.get("/console/{tenant}/rules/{rule_id}")
async def edit_rule(
    request: Request, session: Session, tenant: str, rule_id: str, saved: int = 0
) -> Response:
    session.require_tenant(tenant)
    reply = await api(request, session).rules("GET", f"/rules/{rule_id}", tenant)
    if not reply.ok:
        return page(
            request, session, tenant, "message.html", title="Rule not available", message=reply.message
        )
    rule = reply.body
    return editor(request, session, tenant, rule, rule_id=rule_id, version=rule["version"], saved=saved)


@router.post("/console/{tenant}/rules/save")
async def save_rule(request: Request, session: Session, tenant: str) -> Response:
    """Create (no ``rule_id``) or replace (``rule_id`` and the ``version`` read) from the editor form."""
    session.require_tenant(tenant)
    form = await request.form()
    types = editor_context(request, tenant)["fields"]
    rule, keys = parse_rule_form(form, types)
    rule_id = str(form.get("rule_id", "")).strip() or None
    version_text = str(form.get("version", "")).strip()
    version = int(version_text) if version_text.isdigit() else None
    client = api(request, session)
    if rule_id is None:
        new_id = str(form.get("new_id", "")).strip()
        body = {**rule, "id": new_id} if new_id else rule
        reply = await client.rules("POST", "/rules", tenant, json=body)
    else:
        reply = await client.rules("PUT", f"/rules/{rule_id}", tenant, json={**rule, "version": version})
    if reply.ok:
        saved = reply.body["rule"]
        return redirect(request, f"/console/{tenant}/rules/{saved['id']}?saved={saved['version']}")
    conflict = None
    if reply.status == 409 and reply.code == "rule_version_conflict":
        conflict = {"message": reply.message, "current": (reply.details or {}).get("currentVersion")}
    errors = errors_by_field(reply.field_errors(), keys)
    if not errors and conflict is None:
        errors = {"_form": [reply.message]}
    return editor(
        request,
        session,
        tenant,
        rule,
        rule_id=rule_id,
        version=version,
        keys=keys,
        status_code=200,
        errors=errors,
        conflict=conflict,
        new_id=str(form.get("new_id", "")),
    )


@router.get("/console/{tenant}/fragments/action")
async def action_fragment(request: Request, session: Session, tenant: str, kind: str) -> Response:
    """A new, empty action block for the editor (htmx appends it)."""
    session.require_tenant(tenant)
    if kind not in ACTION_TYPES:
        return HTMLResponse("unknown action type", status_code=400)
    return render(
        request,
        "action_block.html",
        session=session,
        tenant=tenant,
        action=blank_action(kind),
        k=new_key(),
        errors={},
        **editor_context(request, tenant),
    )


@router.post("/console/{tenant}/rules/{rule_id}/toggle")
async def toggle_rule(
    request: Request, session: Session, tenant: str, rule_id: str, version: Annotated[int, Form()]
) -> Response:
    """Enable or disable: the rule as read at ``version`` with ``enabled`` flipped (409 if it moved on)."""
    session.require_tenant(tenant)
    client = api(request, session)
    reply = await client.rules("GET", f"/rules/{rule_id}", tenant)
    if reply.ok:
        rule = reply.body
        rule["enabled"] = not rule["enabled"]
        rule["version"] = version
        reply = await client.rules("PUT", f"/rules/{rule_id}", tenant, json=rule)
    if reply.ok:
        return render(request, "rule_row.html", session=session, tenant=tenant, r=reply.body["rule"])
    return render(request, "row_error.html", session=session, tenant=tenant, rule_id=rule_id, reply=reply)


@router.post("/console/{tenant}/rules/{rule_id}/delete")
async def delete_rule(
    request: Request, session: Session, tenant: str, rule_id: str, version: Annotated[int, Form()]
) -> Response:
    session.require_tenant(tenant)
    reply = await api(request, session).rules(
        "DELETE", f"/rules/{rule_id}", tenant, params={"version": version}
    )
    if reply.ok:
        return redirect(request, f"/console/{tenant}/rules")
    return page(request, session, tenant, "message.html", title="Not deleted", message=reply.message)


def pretty(rule: dict[str, Any] | None) -> list[str]:
    if rule is None:
        return ["(deleted)"]
    shown = {k: v for k, v in rule.items() if k not in ("version", "updatedAt", "createdAt", "id")}
    return json.dumps(shown, indent=2, sort_keys=True).splitlines()


@router.get("/console/{tenant}/rules/{rule_id}/history")
async def history(
    request: Request, session: Session, tenant: str, rule_id: str, a: int = 0, b: int = 0
) -> Response:
    """Versions, newest first, and a line diff of version ``a`` against ``b`` (default: the last two)."""
    session.require_tenant(tenant)
    reply = await api(request, session).rules("GET", f"/rules/{rule_id}/versions", tenant)
    if not reply.ok:
        return page(request, session, tenant, "message.html", title="No history", message=reply.message)
    versions = reply.body["versions"]
    by_number = {v["version"]: v for v in versions}
    b = b if b in by_number else versions[0]["version"]
    a = a if a in by_number else (versions[1]["version"] if len(versions) > 1 else b)
    diff = list(
        difflib.unified_diff(
            pretty(by_number[a]["rule"]),
            pretty(by_number[b]["rule"]),
            f"version {a}",
            f"version {b}",
            lineterm="",
        )
    )
    current = versions[0]
    return page(
        request, session, tenant, "history.html", rule_id=rule_id, versions=versions, a=a, b=b, diff=diff,
        current=current,
    )  # fmt: skip


@router.post("/console/{tenant}/rules/{rule_id}/revert")
async def revert(
    request: Request,
    session: Session,
    tenant: str,
    rule_id: str,
    to: Annotated[int, Form()],
    version: Annotated[int, Form()],
) -> Response:
    """Write version ``to``'s rule again as a new version (naming ``version``, the current one)."""
    session.require_tenant(tenant)
    client = api(request, session)
    reply = await client.rules("GET", f"/rules/{rule_id}/versions", tenant)
    old = next((v["rule"] for v in reply.body["versions"] if v["version"] == to), None) if reply.ok else None
    if old is not None:
        body = {k: v for k, v in old.items() if k not in ("createdAt", "updatedAt")}
        reply = await client.rules("PUT", f"/rules/{rule_id}", tenant, json={**body, "version": version})
        if reply.ok:
            return redirect(
                request, f"/console/{tenant}/rules/{rule_id}?saved={reply.body['rule']['version']}"
            )
    message = reply.message if not reply.ok else f"version {to} is a deletion or does not exist"
    return page(request, session, tenant, "message.html", title="Not reverted", message=message)
