"""The FastAPI dependency every service puts on its protected routes.

Usage (in a service's ``create_app``)::

    authorizer = Authorizer(settings, store)          # store optional, see below
    app.state.authorizer = authorizer

    @router.post("/search")
    def search(body: SearchRequest, principal: Annotated[Principal | None,
               Depends(authorizer.require(SEARCH_READ))]) -> ...: ...

``require(scope, tenant_default=None)`` returns ``async def dependency(request) -> Principal | None``:

1. ``Authorization: Bearer <token>`` (RFC 6750 section 2.1); none: 401 ``unauthorized``.
2. The token is an RFC 9068 access token signed by a key the token service publishes (cached; unknown
   ``kid`` refreshes the cache), with our ``iss`` and ``aud``, not expired: else 401 ``invalid_token``.
   Oversized (> 8 KiB) or malformed tokens are 401 too, never 500.
3. ``scope`` is among the token's scopes: else 403 ``insufficient_scope``.
4. Every tenant the request names is among the token's tenants: else 403 ``tenant_forbidden``. The
   tenants named are every ``tenant`` query parameter and the ``tenant`` field of a JSON body or of a
   form, all of them checked (not only the first), so a route reading either place is covered; with none,
   ``tenant_default``. The body read is cached by Starlette, so the route still gets it.

The keys come from ``{settings.auth_url}/.well-known/jwks.json`` over HTTP; when the Authorizer is given
the service's BlobStore it reads the published public keys from object storage (``_auth/public/``)
instead: no network hop and no dependency on the token service being up. Either way the keys are cached
(re-read every 5 minutes, and on an unknown ``kid`` at most every 2 s). With ``settings.auth == "off"``
every check passes and the dependency returns None. A token already verified is cached until it expires:
a repeat request costs a few microseconds.
"""

from __future__ import annotations

import email.message
import logging
import time
from collections.abc import Awaitable, Callable

import httpx
from fastapi import Request

from aisle.core.auth.errors import InsufficientScope, InvalidToken, TenantForbidden, Unauthorized
from aisle.core.auth.jwks import HttpJwksSource, JwksSource, PublicKeyCache, StoreJwksSource
from aisle.core.auth.scopes import SCOPES
from aisle.core.auth.tokens import ACCESS_TOKEN_AUDIENCE, Principal, TokenVerifier, parse_access_token
from aisle.core.config import Settings
from aisle.core.storage import BlobStore

__all__ = ["Authorizer", "Principal"]

log = logging.getLogger("aisle.auth")


class Authorizer:
    """Validates bearer tokens for one service (see the module docstring for the rules).

    Args:
        settings: ``auth`` switches validation; ``auth_url`` is the expected issuer and JWKS location.
        store: when given, public keys are read from object storage rather than over HTTP.
        transport: httpx transport for the JWKS fetch (tests route it to the token service's ASGI app).
        jwks_source: overrides both (tests).
        clock: monotonic seconds for the key cache's refresh intervals (tests step it instead of sleeping).
    """

    def __init__(
        self,
        settings: Settings,
        store: BlobStore | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        jwks_source: JwksSource | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.enabled = settings.auth == "on"
        if not self.enabled:
            log.warning("AISLE_AUTH=off: requests are not authenticated")
        base = settings.auth_url.rstrip("/")
        if jwks_source is None:
            if store is not None:
                jwks_source = StoreJwksSource(store)
            else:
                jwks_source = HttpJwksSource(base + "/.well-known/jwks.json", transport=transport)
        self.keys = PublicKeyCache(jwks_source, clock=clock)
        self.verifier = TokenVerifier(issuer=base, audience=ACCESS_TOKEN_AUDIENCE)

    def require(
        self, scope: str, *, tenant_default: str | None = None
    ) -> Callable[[Request], Awaitable[Principal | None]]:
        """A dependency checking the token, ``scope`` and the request's tenant. Returns the Principal.

        The returned function carries the scope as its ``scope`` attribute (route introspection).

        Raises (from the dependency): Unauthorized / InvalidToken (401), InsufficientScope /
        TenantForbidden (403), Unavailable (503) when the keys cannot be fetched at all.
        ``ValueError`` here, at app construction, for a scope not in :data:`SCOPES`.
        """
        check_scope(scope)

        async def authorize(request: Request) -> Principal | None:
            return await self.authorize(request, scope, tenant_default)

        authorize.__name__ = f"require_{scope.replace(':', '_')}"
        authorize.scope = scope  # type: ignore[attr-defined]  # lets tests find each route's scope
        return authorize

    async def authorize(
        self, request: Request, scope: str, tenant_default: str | None = None
    ) -> Principal | None:
        """What the :meth:`require` dependency checks, for one request (rules 1-4 of the module docstring).

        Returns the Principal, or None with auth off. Raises as :meth:`require` says.
        """
        if not self.enabled:
            return None
        principal = await self.authenticate(request)
        if scope not in principal.scopes:
            raise InsufficientScope(scope)
        for tenant in await request_tenants(request, tenant_default):
            if tenant not in principal.tenants:
                raise TenantForbidden(tenant)
        return principal

    async def authenticate(self, request: Request) -> Principal:
        """The verified principal of the request's bearer token. Raises Unauthorized or InvalidToken."""
        return await self.principal_of(bearer_token(request.headers.get("authorization")))

    async def principal_of(self, token: str) -> Principal:
        """The verified principal of an access token (a console's sign-in form hands one over without a
        request header). Raises InvalidToken (401), Unavailable (503) when the keys cannot be fetched."""
        principal = self.verifier.cached(token)
        if principal is not None:
            return principal
        parsed = parse_access_token(token)
        key = await self.keys.get(parsed.headers()["kid"])
        if key is None:
            raise InvalidToken("token signed by an unknown key")
        return self.verifier.verify(token, key, parsed=parsed)


def check_scope(scope: str) -> str:
    """``scope`` if it is one of :data:`SCOPES`, else ``ValueError`` (a mistake in a route, not a request)."""
    if scope not in SCOPES:
        raise ValueError(f"unknown scope '{scope}'; known: {', '.join(SCOPES)}")
    return scope


def bearer_token(authorization: str | None) -> str:
    """The token of an ``Authorization: Bearer <token>`` header (RFC 6750 section 2.1).

    Raises:
        Unauthorized: no header, or another scheme.
        InvalidToken: ``Bearer`` with an empty or non-ASCII token.
    """
    if not authorization:
        raise Unauthorized()
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        raise Unauthorized("the Authorization header must use the Bearer scheme")
    token = token.strip()
    if not token or not token.isascii():
        raise InvalidToken("empty or malformed bearer token")
    return token


async def request_tenants(request: Request, default: str | None) -> list[str]:
    """Every tenant the request names (query ``tenant`` params, body ``tenant`` field), else ``[default]``.

    A JSON body is parsed the way FastAPI does (no content type, or ``application/json`` / ``+json``); an
    unparsable body names no tenant (the route answers 422). A non-string ``tenant`` is returned as its
    repr so it can never match an allowed tenant.
    """
    tenants = list(request.query_params.getlist("tenant"))
    tenants.extend(await _body_tenants(request))  # any method: FastAPI parses a GET body too
    if not tenants and default is not None:
        tenants.append(default)
    return tenants


async def _body_tenants(request: Request) -> list[str]:
    headers = request.headers
    http1 = request.scope.get("http_version", "1.1") in ("1.0", "1.1")
    if http1 and headers.get("content-length", "0") == "0" and "transfer-encoding" not in headers:
        return []  # no body (RFC 9112 section 6.3, HTTP/1 only; HTTP/2 frames a body without either)
    content_type = headers.get("content-type")
    if content_type:
        message = email.message.Message()
        message["content-type"] = content_type
        maintype, subtype = message.get_content_maintype(), message.get_content_subtype()
        if maintype == "multipart" or (maintype, subtype) == ("application", "x-www-form-urlencoded"):
            try:
                form = await request.form()
            except Exception:  # a malformed form is the route's 400/422 to give
                return []
            return [v if isinstance(v, str) else repr(v) for v in form.getlist("tenant")]
        if not (maintype == "application" and (subtype == "json" or subtype.endswith("+json"))):
            return []
    if not await request.body():
        return []
    try:
        data = await request.json()
    except ValueError:
        return []
    if isinstance(data, dict) and data.get("tenant") is not None:
        value = data["tenant"]
        return [value if isinstance(value, str) else repr(value)]
    return []
