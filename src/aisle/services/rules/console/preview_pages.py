"""The rule editor's side-by-side preview (the rules API's ``POST /rules/preview``) and product photos.

The preview sends the rule as it stands in the editor (unsaved) with the stored rule's id, so the
"without" column is the tenant's live rules minus this one and the "with" column adds the edited
version. Product photos come from ``AISLE_PHOTOS_DIR/<tenant>/images/<id>.jpg`` when configured.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, Response

from aisle.core.validation import is_resource_id
from aisle.services.rules.console.frame import api, render
from aisle.services.rules.console.rule_form import errors_by_field, field_types, parse_rule_form
from aisle.services.rules.console.session import Session

router = APIRouter(include_in_schema=False)
PHOTO_SUFFIXES = (".jpg", ".jpeg", ".png")
PREVIEW_SIZE = 24


def photo_path(request: Request, tenant: str, product_id: str) -> Path | None:
    """The product's photo file, or None (no photos configured, none for this product, or a bad id)."""
    root = request.app.state.rules.settings.photos_dir
    if root is None or not is_resource_id(product_id) or not is_resource_id(tenant):
        return None
    folder = Path(root) / tenant / "images"
    for suffix in PHOTO_SUFFIXES:
        path = folder / f"{product_id}{suffix}"
        if path.is_file():
            return path
    return None


@router.get("/console/{tenant}/photos/{product_id}")
async def photo(request: Request, session: Session, tenant: str, product_id: str) -> Response:
    session.require_tenant(tenant)
    path = photo_path(request, tenant, product_id)
    if path is None:
        return Response(status_code=404)
    return FileResponse(path, headers={"Cache-Control": "private, max-age=3600"})


def card(request: Request, tenant: str, product: dict[str, Any], position: int) -> dict[str, Any]:
    """What a product card shows: title, brand, price, photo URL (None without one), 1-based position."""
    pid = str(product.get("id", ""))
    title = product.get("name") or product.get("title") or pid
    has_photo = photo_path(request, tenant, pid) is not None
    return {
        "id": pid,
        "title": title,
        "brand": product.get("brand") or "",
        "price": product.get("price"),
        "photo": f"/console/{tenant}/photos/{pid}" if has_photo else None,
        "position": position,
    }


def pinned_ids(rule: dict[str, Any] | None) -> set[str]:
    if not rule:
        return set()
    return {i["productId"] for a in rule["actions"] if a["type"] == "pin" for i in a.get("items", [])}


@router.post("/console/{tenant}/preview")
async def preview(request: Request, session: Session, tenant: str) -> Response:
    """Both result pages for the query ``pq`` with the editor's rule; API errors are listed, not raised."""
    session.require_tenant(tenant)
    form = await request.form()
    rule_id = str(form.get("rule_id", "")).strip() or None
    draft: dict[str, Any] | None = None
    keys: list[str] = []
    if form.getlist("act") or form.get("name") is not None:
        config = request.app.state.rules.tenants.config(tenant)
        draft, keys = parse_rule_form(form, field_types(config))
        draft["name"] = draft["name"] or "draft"
    body: dict[str, Any] = {"search": {"query": str(form.get("pq", "")), "size": PREVIEW_SIZE}}
    no_action = draft is not None and not draft.get("actions")
    if draft is not None and not no_action:  # a rule without an action yet: the plain results
        body["rule"] = draft
    if rule_id and not no_action:
        body["ruleId"] = rule_id
    reply = await api(request, session).rules("POST", "/rules/preview", tenant, json=body)
    if not reply.ok:
        errors = errors_by_field([(p.removeprefix("rule."), m) for p, m in reply.field_errors()], keys)
        lines = [m for slot in errors.values() for m in slot] or [reply.message]
        return render(request, "preview.html", error="; ".join(lines), session=session)
    result = reply.body
    changes = result["changes"]
    moved = {m["id"]: m["after"] - m["before"] for m in changes["moved"]}
    without = [card(request, tenant, p, i + 1) for i, p in enumerate(result["withoutRule"]["products"])]
    with_rule = [card(request, tenant, p, i + 1) for i, p in enumerate(result["withRule"]["products"])]
    return render(
        request,
        "preview.html",
        session=session,
        tenant=tenant,
        without=without,
        with_rule=with_rule,
        changes=changes,
        moved=moved,
        added=set(changes["added"]),
        pinned=pinned_ids(draft),
        warnings=result.get("warnings", []),
        no_action=no_action or (draft is None and rule_id is None),
        error=None,
    )
