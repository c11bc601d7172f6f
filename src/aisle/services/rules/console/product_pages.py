"""Console pages for products: find one, see it as stored now, change its price and availability, and
read its change history from the catalog change log.

The rules service runs on the tenant's bucket, so the pages call the catalog engine's front door
(:class:`aisle.catalog.writer.CatalogWriter`, ``RulesState.catalog``) in-process, as the other console
pages call their engines, with the session's scopes checked here: ``catalog:read`` to see a product,
``catalog:write`` to change one. A change is one JSON merge patch (the fields the merchandiser changed)
answered with the tenant's catalog sequence once it is in the bucket; ``stale`` (a newer write is
stored) and refused values are shown where they belong. Finding by words reuses the rule preview's
search (``POST /rules/preview`` without a rule: the live results, with the token's ``search:read``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, Response

from aisle.catalog.history import PAGE_SIZE
from aisle.core.errors import AisleError
from aisle.services.rules.console.frame import api, page, redirect, render
from aisle.services.rules.console.preview_pages import card
from aisle.services.rules.console.product_form import AVAILABILITY, editable_fields, patch_of, title_field
from aisle.services.rules.console.session import ConsoleSession, Session
from aisle.services.rules.state import RulesState

router = APIRouter(include_in_schema=False)
FOUND_SIZE = 20
READ_NEEDED = "Products need the catalog:read scope, which this token does not have."


def _state(request: Request) -> RulesState:
    return request.app.state.rules  # type: ignore[no-any-return]


def _refused(request: Request, session: ConsoleSession, tenant: str, message: str) -> HTMLResponse:
    response = page(request, session, tenant, "message.html", title="Not allowed", message=message)
    response.status_code = 403
    return response


async def _by_id(request: Request, tenant: str, text: str) -> dict[str, Any] | None:
    """The product whose id is ``text`` exactly, as a result card (None when there is none)."""
    try:
        record = await run_in_threadpool(_state(request).catalog.product, tenant, text)
    except AisleError:
        return None
    return card(request, tenant, {**record.fields, "id": record.id}, 0)


async def _by_words(
    request: Request, session: ConsoleSession, tenant: str, text: str
) -> tuple[list[dict[str, Any]], str | None]:
    """The live search's first results for ``text`` as cards, or a reason there are none."""
    if not session.can_search:
        return [], "Searching by words needs the search:read scope; search by product id instead."
    body = {"search": {"query": text, "size": FOUND_SIZE}}
    reply = await api(request, session).rules("POST", "/rules/preview", tenant, json=body)
    if not reply.ok:
        return [], reply.message
    found = reply.body["withoutRule"]["products"]
    return [card(request, tenant, p, i + 1) for i, p in enumerate(found)], None


PICK_SIZE = 8


@router.get("/console/{tenant}/product-picks")  # beside products/: a product may be called "pick"
async def product_pick(
    request: Request, session: Session, tenant: str, q: str = "", exact: bool = False
) -> Response:
    """The product picker's choices for ``q`` (an HTML list; console.js shows it under any input marked
    ``data-product-picker``): the product whose id is ``q`` first (``catalog:read``), then the live
    search's first results for the words (``search:read``). ``exact``: the id only (an input's title
    shown on load)."""
    session.require_tenant(tenant)
    text = q.strip()
    if not text:
        return render(request, "picks.html", picks=[], note=None, q=q)
    by_id = await _by_id(request, tenant, text) if session.can_read_catalog else None
    found, note = ([by_id] if by_id else []), None
    if not exact:
        words, note = await _by_words(request, session, tenant, text)
        found += [c for c in words if c["id"] not in {f["id"] for f in found}][:PICK_SIZE]
    return render(request, "picks.html", picks=found[: PICK_SIZE + 1], note=note, q=q)


@router.get("/console/{tenant}/products")
async def product_search(request: Request, session: Session, tenant: str, q: str = "") -> Response:
    """The search box and, for ``q``, the product with that id and the live search's results."""
    session.require_tenant(tenant)
    if not session.can_read_catalog:
        return _refused(request, session, tenant, READ_NEEDED)
    text = q.strip()
    exact = await _by_id(request, tenant, text) if text else None
    found, note = await _by_words(request, session, tenant, text) if text else ([], None)
    found = [c for c in found if exact is None or c["id"] != exact["id"]]
    return page(request, session, tenant, "products.html", q=q, exact=exact, found=found, note=note)


async def product_view(
    request: Request,
    session: ConsoleSession,
    tenant: str,
    product_id: str,
    page_no: int = 1,
    status_code: int = 200,
    **extra: Any,
) -> HTMLResponse:
    """The product page: fields as stored now, the form, and page ``page_no`` of the history."""
    state = _state(request)
    try:
        record = await run_in_threadpool(state.catalog.product, tenant, product_id)
        history = await run_in_threadpool(
            lambda: state.history.of(tenant, product_id, offset=(page_no - 1) * PAGE_SIZE)
        )
    except AisleError as exc:
        response = page(request, session, tenant, "message.html", title="Product not available",
                        message=exc.message)  # fmt: skip
        response.status_code = exc.status
        return response
    config = state.tenants.config(tenant)
    response = page(
        request, session, tenant, "product.html", record=record, history=history, page_no=page_no,
        editable=editable_fields(config), title_field=title_field(config), form=extra.pop("form", {}),
        errors=extra.pop("errors", {}), currency=config.global_.currency, availability_values=AVAILABILITY,
        **extra,
    )  # fmt: skip
    response.status_code = status_code
    return response


@router.get("/console/{tenant}/products/{product_id:path}")
async def product_page(
    request: Request,
    session: Session,
    tenant: str,
    product_id: str,
    page_no: int = Query(1, alias="page", ge=1, le=100_000),
    saved: int = 0,
    skipped: str = "",
) -> Response:
    """A product; ``saved``: the sequence of the change just made, ``skipped``: its stale fields."""
    session.require_tenant(tenant)
    if not session.can_read_catalog:
        return _refused(request, session, tenant, READ_NEEDED)
    stale = [f for f in skipped.split(",") if f]
    return await product_view(request, session, tenant, product_id, page_no, saved=saved, skipped=stale)


@router.post("/console/{tenant}/products/{product_id:path}")
async def change_product(request: Request, session: Session, tenant: str, product_id: str) -> Response:
    """The form's changes as one merge patch; a change that applied redirects to the page (with its
    sequence), anything else shows the page again with the form as sent and what went wrong."""
    session.require_tenant(tenant)
    if not session.can_edit_catalog:
        return _refused(request, session, tenant, "Changing products needs the catalog:write scope.")
    state = _state(request)
    form = {k: str(v) for k, v in (await request.form()).items()}
    patch, errors = patch_of(form, editable_fields(state.tenants.config(tenant)))
    again: dict[str, Any] = {"form": form, "errors": errors}
    if errors or not patch:
        again["notice"] = None if errors else "Nothing changed: the form holds the stored values."
        return await product_view(request, session, tenant, product_id, **again)
    try:
        outcome = await run_in_threadpool(state.catalog.patch, tenant, product_id, patch)
    except AisleError as exc:
        field = exc.details.get("field") if isinstance(exc.details, dict) else None
        again["errors"] = {field: exc.message} if field in patch else {}
        again["failure"] = f"Not saved ({exc.status} {exc.code}): {exc.message}"
        return await product_view(request, session, tenant, product_id, status_code=exc.status, **again)
    result = outcome.results[0]
    if result.status == "stale":
        again["stale"] = outcome.sequence
        return await product_view(request, session, tenant, product_id, status_code=409, **again)
    skipped = ",".join(result.stale_fields)
    url = f"/console/{tenant}/products/{quote(product_id, safe='')}?saved={outcome.sequence}"
    return redirect(request, url + (f"&skipped={skipped}" if skipped else ""))
