"""Console pages for containers (slots, models, recommendation rules) and their preview (models and jobs:
:mod:`.model_pages`).

Containers, models and jobs are the edit service's (``AISLE_EDIT_URL``), reached with the session's
token; the preview calls the predict service's ``POST /predict`` twice for a seed product, with no
actions and with the rules being edited, each time leaving the container's saved rules out
(``containerRules: false``; predict applies them otherwise). A container is saved whole (slots and
rules in one ``PUT`` naming the version read), so a stale version is a 409 and nothing is half-saved.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from aisle.catalog.store import CatalogNotFound
from aisle.services.rules.console.frame import api, page, redirect, render
from aisle.services.rules.console.preview_pages import card
from aisle.services.rules.console.session import ConsoleSession, Session

router = APIRouter(include_in_schema=False)
SLOT_FIELDS = ("slotConfigId", "modelId", "placement", "itemCount")


@router.get("/console/{tenant}/containers")
async def containers(request: Request, session: Session, tenant: str) -> Response:
    session.require_tenant(tenant)
    reply = await api(request, session).edit("GET", "/containers", tenant)
    items = reply.body if reply.ok else []
    error = None if reply.ok else reply.message
    return page(request, session, tenant, "containers.html", nav="containers", containers=items, error=error)


async def _fields(request: Request, tenant: str) -> list[str]:
    config = request.app.state.rules.tenants.config(tenant)
    return [a.name for a in config.attributes.attributes]


async def container_page(
    request: Request,
    session: ConsoleSession,
    tenant: str,
    container: dict[str, Any],
    **extra: Any,
) -> Response:
    models = await api(request, session).edit("GET", "/models", tenant)
    errors = extra.pop("errors", {})
    return page(
        request,
        session,
        tenant,
        "container.html",
        nav="containers",
        c=container,
        models=models.body["models"] if models.ok else [],
        fields=await _fields(request, tenant),
        # inside <script type="application/json">: "<" escaped so no value can close the element
        rules_json=json.dumps(container.get("recommendationRules", [])).replace("<", "\\u003c"),
        slot_ids=[s["slotConfigId"] for s in container["slotConfigurations"]],
        errors=errors,
        rule_errors={
            k.removeprefix("rule"): v for k, v in errors.items() if k[4:].isdigit() and k[:4] == "rule"
        },
        **extra,
    )


@router.get("/console/{tenant}/containers/{container_id}")
async def container(
    request: Request, session: Session, tenant: str, container_id: str, saved: int = 0
) -> Response:
    session.require_tenant(tenant)
    reply = await api(request, session).edit("GET", f"/containers/{container_id}", tenant)
    if not reply.ok:
        return page(
            request, session, tenant, "message.html", title="Container not available", message=reply.message
        )
    return await container_page(request, session, tenant, reply.body, saved=saved)


def _slots(form: Any) -> list[dict[str, Any]]:
    columns = {f: [str(v) for v in form.getlist(f"slot_{f}")] for f in SLOT_FIELDS}
    slots = []
    for i in range(len(columns["slotConfigId"])):
        slot: dict[str, Any] = {f: columns[f][i] if i < len(columns[f]) else "" for f in SLOT_FIELDS}
        if not any(slot.values()):
            continue
        for f in ("placement", "itemCount"):
            slot[f] = int(slot[f]) if slot[f].lstrip("-").isdigit() else slot[f]
        slots.append(slot)
    return slots


def _rules(form: Any) -> tuple[list[Any], str | None]:
    text = str(form.get("rules_json", "[]")) or "[]"
    try:
        rules = json.loads(text)
    except json.JSONDecodeError as exc:
        return [], f"recommendation rules: not JSON ({exc})"
    return (rules, None) if isinstance(rules, list) else ([], "recommendation rules: give a list")


def _errors(reply: Any) -> dict[str, list[str]]:
    """API error paths onto the page's parts: ``slot<i>``, ``rules`` or ``_form``."""
    out: dict[str, list[str]] = {}
    for path, message in reply.field_errors():
        parts = path.split(".")
        if parts[0] == "slotConfigurations" and len(parts) > 1 and parts[1].isdigit():
            slot = f"slot{parts[1]}"
            message = f"{'.'.join(parts[2:])}: {message}" if len(parts) > 2 else message
        elif parts[0] == "recommendationRules" and len(parts) > 1 and parts[1].isdigit():
            rest = ".".join(p for p in parts[2:] if p not in ("FILTER", "BOOST", "BURY"))
            slot, message = f"rule{parts[1]}", f"{rest}: {message}" if rest else message
        elif parts[0] == "recommendationRules":
            slot = "rules"
        else:
            slot = "_form"
        out.setdefault(slot, []).append(message)
    if not out:
        key = "rules" if "recommendationRules" in reply.message else "_form"
        out[key] = [reply.message]
    return out


@router.post("/console/{tenant}/containers/{container_id}/save")
async def save_container(request: Request, session: Session, tenant: str, container_id: str) -> Response:
    """``PUT`` the container (name, slots and recommendation rules) at the version read."""
    session.require_tenant(tenant)
    form = await request.form()
    rules, problem = _rules(form)
    version = str(form.get("version", ""))
    body = {
        "name": str(form.get("name", "")),
        "description": str(form.get("description", "")),
        "slotConfigurations": _slots(form),
        "recommendationRules": rules,
        "version": int(version) if version.isdigit() else version,
    }
    draft = {**body, "containerId": container_id}
    if problem:
        return await container_page(request, session, tenant, draft, errors={"rules": [problem]})
    reply = await api(request, session).edit("PUT", f"/containers/{container_id}", tenant, json=body)
    if reply.ok:
        return redirect(request, f"/console/{tenant}/containers/{container_id}?saved={reply.body['version']}")
    conflict = None
    if reply.status == 409 and reply.code == "container_version_conflict":
        conflict = {"message": reply.message, "current": (reply.details or {}).get("currentVersion")}
    return await container_page(
        request, session, tenant, draft, errors={} if conflict else _errors(reply), conflict=conflict
    )


@router.post("/console/{tenant}/containers/{container_id}/preview")
async def preview(request: Request, session: Session, tenant: str, container_id: str) -> Response:
    """Predict for the seed product without actions and with the rules as edited."""
    session.require_tenant(tenant)
    form = await request.form()
    rules, problem = _rules(form)
    seed = str(form.get("seed", "")).strip()
    if problem or not seed:
        return render(
            request, "rec_preview.html", error=problem or "Give a seed product id.", session=session
        )
    params = {"returnProduct": True, "containerRules": False}  # the draft replaces the saved rules
    base = {"containerId": container_id, "productIds": [seed], "predictParams": params}
    client = api(request, session)
    without = await client.predict(tenant, {**base, "actions": []})
    with_rules = await client.predict(tenant, {**base, "actions": rules})
    for reply in (without, with_rules):
        if not reply.ok:
            return render(request, "rec_preview.html", error=predict_error(reply), session=session)

    rows = catalog_rows(request, tenant)

    def cards(reply: Any) -> list[dict[str, Any]]:
        items = [{**rows(str(p["id"])), **p} for p in reply.body["response_data"]]
        return [card(request, tenant, p, i + 1) for i, p in enumerate(items)]

    return render(
        request,
        "rec_preview.html",
        session=session,
        error=None,
        without=cards(without),
        with_rules=cards(with_rules),
        rule_count=len(rules),
    )


def catalog_rows(request: Request, tenant: str) -> Callable[[str], dict[str, Any]]:
    """Product id -> its catalog row (brand, title, ...) for the cards; {} without a catalog."""
    try:
        index = request.app.state.rules.indexes.get(tenant)
    except CatalogNotFound:
        return lambda pid: {}
    return lambda pid: index.rows[index.ord_by_id[pid]] if pid in index.ord_by_id else {}


def predict_error(reply: Any) -> str:
    """The message of predict's ``{success, response_data, error}`` envelope (or the standard one)."""
    err = reply.body.get("error") if isinstance(reply.body, dict) else None
    if isinstance(err, dict):
        details = err.get("details")
        if isinstance(details, list) and details:
            return "; ".join(
                f"{d.get('field', '').removeprefix('body.')}: {d.get('message')}" for d in details
            )
        return str(err.get("message", reply.message))
    return reply.message
