"""Token service routes: ``POST /token`` and ``GET /.well-known/jwks.json`` (and the shared ``/health``)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import parse_qsl

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from aisle.core.auth.assertion import JWT_BEARER
from aisle.core.auth.errors import OAuthError, invalid_request
from aisle.core.errors import ErrorCode, Unavailable
from aisle.services.auth.schemas import JwkSet, OAuthErrorResponse, TokenResponse
from aisle.services.auth.state import Grant, Keys
from aisle.services.common.errors import RETRY_AFTER_DOC

router = APIRouter()

MAX_TOKEN_REQUEST_BYTES = 16_384
# RFC 6749 section 5.1: token responses must not be cached.
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


FORM_SCHEMA = {
    "type": "object",
    "required": ["grant_type", "assertion"],
    "properties": {
        "grant_type": {"type": "string", "example": JWT_BEARER},
        "assertion": {"type": "string", "description": "The client's signed JWT (RFC 7523 section 3)."},
        "scope": {"type": "string", "description": "Optional space-separated subset of the client's scopes."},
    },
}


async def read_form(request: Request) -> dict[str, str]:
    """The token request's parameters (RFC 6749 section 3.2: form-encoded, each at most once; 16 KiB max).

    Parsed here rather than with ``Form()`` fields: ``parse_qsl`` is several times cheaper, and the token
    endpoint is measured by its throughput.

    Raises:
        OAuthError (``invalid_request``): another content type, an oversized body or a repeated parameter.
    """
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/x-www-form-urlencoded":
        raise invalid_request("the token request must be application/x-www-form-urlencoded")
    length = request.headers.get("content-length", "0")
    if not length.isdigit() or int(length) > MAX_TOKEN_REQUEST_BYTES:
        raise invalid_request(f"request body larger than {MAX_TOKEN_REQUEST_BYTES} bytes")
    body = await request.body()
    if len(body) > MAX_TOKEN_REQUEST_BYTES:
        raise invalid_request(f"request body larger than {MAX_TOKEN_REQUEST_BYTES} bytes")
    try:
        pairs = parse_qsl(body.decode("ascii"), keep_blank_values=True, max_num_fields=16)
    except (UnicodeDecodeError, ValueError) as exc:
        raise invalid_request("malformed form body") from exc
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in form:
            raise invalid_request(f"parameter '{name}' given more than once")
        form[name] = value
    return form


@router.post(
    "/token",
    response_model=TokenResponse,
    responses={
        400: {"model": OAuthErrorResponse},
        401: {"model": OAuthErrorResponse},
        503: {
            "model": OAuthErrorResponse,
            "description": "temporarily_unavailable: the replay store (Redis) or object storage is down",
            "headers": {"Retry-After": RETRY_AFTER_DOC},
        },
    },
    summary="Trade a signed client assertion for an access token (RFC 7523 JWT bearer grant)",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/x-www-form-urlencoded": {"schema": FORM_SCHEMA}},
        }
    },
)
async def token(
    grant: Grant,
    form: Annotated[dict[str, str], Depends(read_form)],
) -> JSONResponse:
    """Form ``grant_type``, ``assertion``, optional ``scope``; RFC 6749 section 5.1 response or 5.2 error.

    The exchange runs in the thread pool: client lookups, the replay store (Redis) and signing block.
    """
    try:
        issued = await run_in_threadpool(
            grant.exchange, form.get("grant_type"), form.get("assertion"), form.get("scope")
        )
    except Unavailable as exc:  # storage down while reading clients or keys: this endpoint's envelope
        raise OAuthError(
            ErrorCode.TEMPORARILY_UNAVAILABLE, "object storage unavailable; retry shortly"
        ) from exc
    body = {
        "access_token": issued.access_token,
        "token_type": issued.token_type,
        "expires_in": issued.expires_in,
        "scope": issued.scope,
    }
    return JSONResponse(body, headers=NO_STORE)


@router.get(
    "/.well-known/jwks.json", response_model=JwkSet, summary="Public keys of the access tokens (RFC 7517)"
)
def jwks(keys: Keys) -> JSONResponse:
    """Current and recently retired keys; cacheable for a minute."""
    return JSONResponse(keys.jwks(), headers={"Cache-Control": "public, max-age=60"})
