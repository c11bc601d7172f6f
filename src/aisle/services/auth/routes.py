"""Token service routes: ``POST /token``, ``GET /.well-known/jwks.json``, ``GET /health``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import JSONResponse

from aisle import __version__
from aisle.core.auth.errors import invalid_request
from aisle.core.auth.grant import JwtBearerGrant
from aisle.core.auth.keys import SigningKeys
from aisle.services.auth.schemas import JwkSet, OAuthErrorResponse, TokenResponse
from aisle.services.common.schemas import Health

router = APIRouter()

MAX_TOKEN_REQUEST_BYTES = 16_384
# RFC 6749 section 5.1: token responses must not be cached.
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def get_grant(request: Request) -> JwtBearerGrant:
    return request.state.grant  # type: ignore[no-any-return]


def get_keys(request: Request) -> SigningKeys:
    return request.state.keys  # type: ignore[no-any-return]


def check_size(request: Request) -> None:
    """Refuse a token request body over 16 KiB before it is parsed (``invalid_request``)."""
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_TOKEN_REQUEST_BYTES):
        raise invalid_request(f"request body larger than {MAX_TOKEN_REQUEST_BYTES} bytes")


@router.post(
    "/token",
    response_model=TokenResponse,
    responses={400: {"model": OAuthErrorResponse}, 401: {"model": OAuthErrorResponse}},
    summary="Trade a signed client assertion for an access token (RFC 7523 JWT bearer grant)",
    dependencies=[Depends(check_size)],
)
def token(
    grant: Annotated[JwtBearerGrant, Depends(get_grant)],
    grant_type: Annotated[str | None, Form(description="urn:ietf:params:oauth:grant-type:jwt-bearer")] = None,
    assertion: Annotated[str | None, Form(description="The client's signed JWT (RFC 7523 section 3)")] = None,
    scope: Annotated[str | None, Form(description="Optional subset of the client's scopes")] = None,
) -> JSONResponse:
    """Form-encoded ``grant_type`` and ``assertion``; RFC 6749 section 5.1 response or 5.2 error.

    A plain ``def``: client lookups, the replay store (Redis) and signing run in the thread pool.
    """
    issued = grant.exchange(grant_type, assertion, scope)
    body = TokenResponse(
        access_token=issued.access_token,
        token_type=issued.token_type,
        expires_in=issued.expires_in,
        scope=issued.scope,
    )
    return JSONResponse(body.model_dump(), headers=NO_STORE)


@router.get(
    "/.well-known/jwks.json", response_model=JwkSet, summary="Public keys of the access tokens (RFC 7517)"
)
def jwks(keys: Annotated[SigningKeys, Depends(get_keys)]) -> JSONResponse:
    """Current and recently retired keys; cacheable for a minute."""
    return JSONResponse(keys.jwks(), headers={"Cache-Control": "public, max-age=60"})


@router.get("/health", response_model=Health)
def health() -> Health:
    return Health(service="auth", version=__version__)
