"""What every console page shares: the templates, rendering, the API client of a session, redirects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from aisle.services.rules.console import product_form
from aisle.services.rules.console.api import Api
from aisle.services.rules.console.rule_form import format_value, window_input
from aisle.services.rules.console.session import ConsoleSession
from aisle.services.rules.console.wording import visible_controls

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=HERE / "templates")
# no framing by other sites (clickjacking), no MIME sniffing, no console URLs leaked as referrers
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'; object-src 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
templates.env.finalize = visible_controls  # bidi controls shown, never obeyed
templates.env.filters["clause_value"] = format_value
templates.env.filters["window"] = window_input
templates.env.filters["number"] = product_form.number
templates.env.filters["money"] = product_form.money
templates.env.filters["field_value"] = product_form.field_value
templates.env.filters["input_value"] = product_form.shown
templates.env.filters["micros_time"] = product_form.micros_time
templates.env.filters["iso_time"] = product_form.iso_time


def render(request: Request, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    """Render template ``name``; a request from htmx gets the same template (fragments pick their own)."""
    response = templates.TemplateResponse(request, name, context, status_code=status_code)
    response.headers.update(SECURITY_HEADERS)
    return response


def api(request: Request, session: ConsoleSession) -> Api:
    return Api(request.app, request.app.state.rules.settings, session)


def page(request: Request, session: ConsoleSession, tenant: str, name: str, **context: Any) -> HTMLResponse:
    """A full console page for ``tenant`` (checked against the session's tenants)."""
    session.require_tenant(tenant)
    return render(request, name, session=session, tenant=tenant, **context)


def redirect(request: Request, url: str) -> Response:
    """A redirect an htmx request follows as a page load (``HX-Redirect``), others as 303."""
    if request.headers.get("hx-request"):
        return Response(status_code=204, headers={"HX-Redirect": url})
    return RedirectResponse(url, status_code=303)
