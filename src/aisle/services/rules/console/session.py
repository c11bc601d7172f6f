"""Who is signed in to the console: the platform's own access token, kept in a cookie, and CSRF.

The token a merchandiser pastes on the sign-in page (``aisle auth token ...``) is verified by the rules
service's :class:`~aisle.core.auth.dependencies.Authorizer` (the same checks as a bearer header) and kept
in an ``HttpOnly``, ``SameSite=Strict`` cookie (never in a URL, never readable by scripts). Every call
the console makes to an Aisle API carries it as ``Authorization: Bearer``, so the console can do exactly
what the token's scopes and tenants allow and the APIs refuse the rest.

CSRF (OWASP CSRF cheat sheet, "synchronizer token" and "SameSite"): every state-changing request must
carry ``csrf`` (a form field or the ``X-CSRF-Token`` header htmx sends) equal to
``HMAC-SHA256(cookie value, "aisle-console-csrf")``; a page of another site can neither read the cookie
nor compute it. The sign-in form itself is protected by a random nonce cookie it must echo (login CSRF).
With ``AISLE_AUTH=off`` the cookie holds a random session id instead of a token.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request, Response

from aisle.core.auth.dependencies import Authorizer
from aisle.core.auth.scopes import (
    ANALYTICS_READ,
    CATALOG_READ,
    CATALOG_WRITE,
    RECS_READ,
    RECS_WRITE,
    RULES_WRITE,
    SCOPES,
    SEARCH_READ,
)
from aisle.core.errors import AisleError
from aisle.core.tenancy import Tenants

COOKIE = "aisle_console"
LOGIN_NONCE = "aisle_console_login"
ANON_PREFIX = "anon."


class SignInRequired(Exception):
    """No usable session: the console answers with the sign-in page (``reason`` shown there)."""

    def __init__(self, reason: str = "") -> None:
        super().__init__(reason)
        self.reason = reason


class CsrfRejected(Exception):
    """A state-changing request without the session's CSRF token (403, nothing done)."""


class TenantNotAllowed(Exception):
    """The page names a tenant the session may not use."""

    def __init__(self, tenant: str) -> None:
        super().__init__(tenant)
        self.tenant = tenant


def csrf_token(cookie_value: str) -> str:
    """The CSRF token bound to a session cookie: 32 hex digits of HMAC-SHA256."""
    return hmac.new(cookie_value.encode(), b"aisle-console-csrf", hashlib.sha256).hexdigest()[:32]


@dataclass(frozen=True)
class ConsoleSession:
    """The signed-in merchandiser: token (None with auth off), client id, tenants and scopes."""

    token: str | None
    client_id: str
    tenants: tuple[str, ...]
    scopes: frozenset[str]
    csrf: str

    def can(self, scope: str) -> bool:
        return scope in self.scopes

    @property
    def can_edit_rules(self) -> bool:
        return self.can(RULES_WRITE)

    @property
    def can_edit_recs(self) -> bool:
        return self.can(RECS_WRITE)

    @property
    def can_read_recs(self) -> bool:
        return self.can(RECS_READ)

    @property
    def can_read_analytics(self) -> bool:
        return self.can(ANALYTICS_READ)

    @property
    def can_search(self) -> bool:
        return self.can(SEARCH_READ)

    @property
    def can_read_catalog(self) -> bool:
        return self.can(CATALOG_READ)

    @property
    def can_edit_catalog(self) -> bool:
        return self.can(CATALOG_WRITE)

    def headers(self) -> dict[str, str]:
        """Headers for a call to an Aisle API on the merchandiser's behalf."""
        return {"authorization": f"Bearer {self.token}"} if self.token else {}

    def require_tenant(self, tenant: str) -> str:
        if tenant not in self.tenants:
            raise TenantNotAllowed(tenant)
        return tenant


def _authorizer(request: Request) -> Authorizer:
    return request.app.state.authorizer  # type: ignore[no-any-return]


def _tenants(request: Request) -> Tenants:
    return request.app.state.rules.tenants  # type: ignore[no-any-return]


async def open_session(request: Request, cookie_value: str) -> ConsoleSession:
    """The session a cookie value stands for. Raises SignInRequired (expired or bad token)."""
    authorizer = _authorizer(request)
    if not authorizer.enabled:
        if not cookie_value.startswith(ANON_PREFIX):
            raise SignInRequired()
        names = tuple(sorted(_tenants(request).names()))
        return ConsoleSession(
            None, "anonymous (auth off)", names, frozenset(SCOPES), csrf_token(cookie_value)
        )
    if cookie_value.startswith(ANON_PREFIX):
        raise SignInRequired()
    try:
        principal = await authorizer.principal_of(cookie_value)
    except AisleError as exc:
        raise SignInRequired(f"sign in again: {exc.message}") from exc
    return ConsoleSession(
        token=cookie_value,
        client_id=principal.client_id,
        tenants=tuple(sorted(principal.tenants)),
        scopes=principal.scopes,
        csrf=csrf_token(cookie_value),
    )


async def current_session(request: Request) -> ConsoleSession:
    """Dependency: the request's session; for POSTs also checks CSRF. Raises SignInRequired, CsrfRejected."""
    value = request.cookies.get(COOKIE)
    if not value:
        raise SignInRequired()
    session = await open_session(request, value)
    if request.method not in ("GET", "HEAD"):
        given = request.headers.get("x-csrf-token")
        if given is None:
            form = await request.form()
            field = form.get("csrf")
            given = field if isinstance(field, str) else None
        if not given or not hmac.compare_digest(given, session.csrf):
            raise CsrfRejected()
    return session


Session = Annotated[ConsoleSession, Depends(current_session)]
"""A console route parameter typed ``Session`` receives the signed-in merchandiser."""


def set_session_cookie(response: Response, value: str, secure: bool) -> None:
    response.set_cookie(COOKIE, value, httponly=True, samesite="strict", secure=secure, path="/")
    response.delete_cookie(LOGIN_NONCE, path="/")


def new_login_nonce() -> str:
    return secrets.token_hex(16)


def anonymous_cookie() -> str:
    return ANON_PREFIX + secrets.token_hex(16)
