"""The console's frame: templates, sign-in and sign-out, and how it is mounted (the tenant chooser a
sign-in lands on is :mod:`.home_pages`).

:func:`mount_console` adds the console to the rules service's app: pages under ``/console/...``, ``/``
redirecting there, static files (htmx, CSS, the console's own JS) under ``/console/static``, all
served from this package (no CDN). Console routes are left out of the OpenAPI document: they answer
HTML for people, the JSON APIs are the contract.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, FastAPI, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from aisle.core.errors import AisleError
from aisle.services.rules.console.frame import HERE, redirect, render
from aisle.services.rules.console.session import (
    COOKIE,
    LOGIN_NONCE,
    CsrfRejected,
    Session,
    SignInRequired,
    TenantNotAllowed,
    anonymous_cookie,
    new_login_nonce,
    open_session,
    set_session_cookie,
)

router = APIRouter(include_in_schema=False)


@router.get("/")
async def root() -> Response:
    return RedirectResponse("/console/", status_code=303)


@router.get("/console/login")
async def login_page(request: Request, reason: str = "") -> Response:
    auth_on = request.app.state.authorizer.enabled
    nonce = new_login_nonce()
    response = render(request, "login.html", error=reason, nonce=nonce, auth_on=auth_on)
    response.set_cookie(LOGIN_NONCE, nonce, httponly=True, samesite="strict", path="/")
    return response


@router.post("/console/login")
async def login(
    request: Request, nonce: Annotated[str, Form()] = "", token: Annotated[str, Form()] = ""
) -> Response:
    """Verify the pasted token and keep it in the session cookie (see :mod:`.session`)."""
    auth_on = request.app.state.authorizer.enabled
    expected = request.cookies.get(LOGIN_NONCE)
    if not expected or nonce != expected:
        return render(
            request, "login.html", 403, error="the sign-in form expired: try again", nonce="", auth_on=auth_on
        )
    value = token.strip() if auth_on else anonymous_cookie()
    if auth_on and not value:
        return render(request, "login.html", 400, error="paste an access token", nonce=nonce, auth_on=auth_on)
    try:
        await open_session(request, value)
    except SignInRequired as exc:
        message = exc.reason.removeprefix("sign in again: ") or "this token is not valid"
        return render(request, "login.html", 401, error=message, nonce=nonce, auth_on=auth_on)
    except AisleError as exc:
        return render(request, "login.html", exc.status, error=exc.message, nonce=nonce, auth_on=auth_on)
    response = RedirectResponse("/console/", status_code=303)
    set_session_cookie(response, value, secure=request.url.scheme == "https")
    return response


@router.post("/console/logout")
async def logout(request: Request, session: Session) -> Response:
    response = RedirectResponse("/console/login", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response


def _sign_in(request: Request, exc: Exception) -> Response:
    reason = exc.reason if isinstance(exc, SignInRequired) else ""
    url = "/console/login" + (f"?{urlencode({'reason': reason})}" if reason else "")
    response = redirect(request, url)
    if reason:
        response.delete_cookie(COOKIE, path="/")
    return response


def _csrf(request: Request, exc: Exception) -> Response:
    return HTMLResponse(
        "<p class='error'>Refused: this form was not sent from the console (CSRF check). "
        "Reload the page.</p>",
        status_code=403,
    )


def _tenant(request: Request, exc: Exception) -> Response:
    tenant = exc.tenant if isinstance(exc, TenantNotAllowed) else "?"
    return HTMLResponse(
        f"<p class='error'>Your token does not give access to tenant '{tenant}'.</p>", status_code=403
    )


def mount_console(app: FastAPI) -> None:
    """Add the console's routes, static files and error pages to the rules service's ``app``."""
    from aisle.services.rules.console import (
        analytics_pages,
        experiment_pages,
        home_pages,
        model_pages,
        preview_pages,
        product_pages,
        recs_pages,
        rules_pages,
    )

    app.include_router(router)
    app.include_router(home_pages.router)
    app.include_router(rules_pages.router)
    app.include_router(preview_pages.router)
    app.include_router(recs_pages.router)
    app.include_router(model_pages.router)
    app.include_router(analytics_pages.router)
    app.include_router(experiment_pages.router)
    app.include_router(product_pages.router)
    app.mount("/console/static", StaticFiles(directory=HERE / "static"), name="console-static")
    app.add_exception_handler(SignInRequired, _sign_in)
    app.add_exception_handler(CsrfRejected, _csrf)
    app.add_exception_handler(TenantNotAllowed, _tenant)
