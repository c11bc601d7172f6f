"""The client side of RFC 7523: a signed JWT assertion to trade for an access token."""

from __future__ import annotations

import secrets
import time
from typing import Any

from joserfc import jwt

from aisle.core.auth.clients import ALG_FOR_KEY, ClientKey, load_private_key

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"

__all__ = ["JWT_BEARER", "load_private_key", "make_assertion"]


def make_assertion(
    client_id: str,
    key: ClientKey,
    audience: str,
    *,
    lifetime: int = 300,
    now: int | None = None,
    jti: str | None = None,
    claims: dict[str, Any] | None = None,
) -> str:
    """A compact JWS assertion (RFC 7523 section 3): ``iss`` = ``sub`` = client id, ``aud`` = the token URL.

    Args:
        client_id: the registered client's id.
        key: its private key; the algorithm follows the key type (RS256, ES256 or EdDSA).
        audience: the token endpoint URL, ``{AISLE_AUTH_URL}/token``.
        lifetime: seconds until ``exp``; the token service refuses more than 3600.
        now: ``iat``/``nbf`` in unix seconds (default: the current time).
        jti: the single-use id (default: 128 random bits).
        claims: extra or overriding claims (tests use it to build bad assertions).
    """
    issued = int(time.time()) if now is None else now
    body: dict[str, Any] = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": issued,
        "nbf": issued,
        "exp": issued + lifetime,
        "jti": jti or secrets.token_urlsafe(16),
    }
    body.update(claims or {})
    alg = ALG_FOR_KEY[key.key_type]
    return jwt.encode({"alg": alg, "typ": "JWT"}, body, key, algorithms=[alg])
