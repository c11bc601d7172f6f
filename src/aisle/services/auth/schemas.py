"""Request and response shapes of the token service (RFC 6749 sections 5.1 and 5.2, RFC 7517)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class TokenResponse(BaseModel):
    """RFC 6749 section 5.1 successful response."""

    access_token: str = Field(description="An RFC 9068 JWT access token; send it as Authorization: Bearer.")
    token_type: str = Field(default="Bearer", examples=["Bearer"])
    expires_in: int = Field(description="Seconds until the access token expires.", examples=[900])
    scope: str = Field(description="Granted scopes, space-separated.", examples=["search:read recs:read"])


class OAuthErrorResponse(BaseModel):
    """RFC 6749 section 5.2 error response."""

    error: str = Field(
        description="invalid_request, invalid_grant, unsupported_grant_type, invalid_scope, or "
        "temporarily_unavailable (503: the replay store or object storage is down; see Retry-After)",
        examples=["invalid_grant"],
    )
    error_description: str = Field(examples=["assertion expired"])


class JwkSet(BaseModel):
    """RFC 7517 section 5 JWK Set: the public keys access tokens are signed with."""

    keys: list[dict[str, Any]]
