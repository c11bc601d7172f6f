"""The token endpoint's engine: the JWT bearer grant of RFC 7523 (sections 2.1 and 3).

``exchange(grant_type, assertion, scope)`` checks, in this order (each failure is an :class:`OAuthError`):

1. ``grant_type`` is ``urn:ietf:params:oauth:grant-type:jwt-bearer`` (else ``unsupported_grant_type``;
   missing: ``invalid_request``) and ``assertion`` is present (``invalid_request``) and at most 8 KiB.
2. The unverified ``iss`` names a registered, enabled client, the header's ``alg`` is the one the
   client's key type allows (RS256 / ES256 / EdDSA), so ``none`` and HMAC signed with the public key
   never pass, and the signature verifies (joserfc). These three fail with one and the same
   ``invalid_grant`` answer, so a caller without the key learns neither which client ids exist nor
   what they sign with.
4. ``sub`` = ``iss`` (section 3 items 1-2); ``aud`` holds the token URL or the issuer URL (item 3);
   ``exp`` present, not past and at most one hour ahead (item 4); ``nbf`` and ``iat`` not in the future
   beyond :data:`CLOCK_SKEW` (items 5-6); ``jti`` present and never seen before (item 7).
5. A requested ``scope`` is a subset of the client's scopes (else ``invalid_scope``).

Every assertion failure is ``invalid_grant`` (section 3.1). On success: an access token carrying the
client's tenants and scopes, as an RFC 6749 section 5.1 response.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from joserfc import jws
from joserfc.errors import JoseError

from aisle.core.auth.assertion import JWT_BEARER
from aisle.core.auth.clients import ClientRecord, ClientRegistry, PublicKey
from aisle.core.auth.errors import OAuthError, invalid_grant, invalid_request
from aisle.core.auth.keys import SigningKeys
from aisle.core.auth.replay import JtiStore, ReplayStoreUnavailable
from aisle.core.auth.scopes import parse_scope_param
from aisle.core.auth.tokens import (
    ACCESS_TOKEN_TTL,
    CLOCK_SKEW,
    MAX_TOKEN_BYTES,
    sign_access_token,
    verified_claims,
)
from aisle.core.errors import ErrorCode

MAX_ASSERTION_LIFETIME = 3600
MAX_JTI_LENGTH = 256
_DECODE_ERRORS = (JoseError, ValueError, TypeError, KeyError, IndexError, UnicodeError, OverflowError)


@dataclass(frozen=True)
class IssuedToken:
    """An RFC 6749 section 5.1 success: ``access_token``, ``expires_in`` (seconds) and granted ``scope``."""

    access_token: str
    expires_in: int
    scope: str
    token_type: str = "Bearer"


class JwtBearerGrant:
    """Trades a client's signed assertion for an access token.

    Args:
        clients: the registered clients.
        keys: the service's signing keys.
        jti: the single-use memory for assertion ids.
        issuer: the token service's URL (``AISLE_AUTH_URL``); the ``iss`` of access tokens.
        token_ttl: access-token lifetime, seconds.
        clock: ``() -> unix seconds`` (tests move time).
    """

    def __init__(
        self,
        clients: ClientRegistry,
        keys: SigningKeys,
        jti: JtiStore,
        *,
        issuer: str,
        token_ttl: int = ACCESS_TOKEN_TTL,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.clients, self.keys, self.jti = clients, keys, jti
        self.issuer = issuer.rstrip("/")
        self.audiences = {self.issuer, self.issuer + "/token"}
        self.token_ttl = token_ttl
        self.clock = clock or time.time
        self._keys: dict[str, tuple[dict[str, Any], PublicKey]] = {}

    def exchange(
        self, grant_type: str | None, assertion: str | None, scope: str | None = None
    ) -> IssuedToken:
        """Run the checks of the module docstring. Raises :class:`OAuthError`."""
        if not grant_type:
            raise invalid_request("grant_type is required")
        if grant_type != JWT_BEARER:
            raise OAuthError(ErrorCode.UNSUPPORTED_GRANT_TYPE, f"only {JWT_BEARER} is supported")
        if not assertion:
            raise invalid_request("assertion is required")
        if len(assertion) > MAX_TOKEN_BYTES:
            raise invalid_grant(f"assertion longer than {MAX_TOKEN_BYTES} bytes")
        client = self._verify(assertion)
        granted = self._granted_scopes(client, scope)
        kid, key = self.keys.active()
        token = sign_access_token(
            key,
            kid,
            issuer=self.issuer,
            client_id=client.client_id,
            tenants=client.tenants,
            scopes=granted,
            ttl=self.token_ttl,
            now=int(self.clock()),
        )
        return IssuedToken(access_token=token, expires_in=self.token_ttl, scope=" ".join(granted))

    def _verify(self, assertion: str) -> ClientRecord:
        try:
            unverified = jws.extract_compact(assertion.encode("ascii"))
            header, payload = unverified.headers(), orjson.loads(unverified.payload)
        except (*_DECODE_ERRORS, orjson.JSONDecodeError) as exc:
            raise invalid_grant("assertion is not a compact JWT") from exc
        if not isinstance(header, dict) or not isinstance(payload, dict):
            raise invalid_grant("assertion header and claims must be JSON objects")
        iss = payload.get("iss")
        if not isinstance(iss, str):
            raise invalid_grant("assertion has no iss (the client id)")
        # One answer for an unknown or disabled client, a wrong algorithm and a bad signature, so the
        # token endpoint never tells a caller without the key which client ids exist or what they sign with.
        refused = invalid_grant(
            "assertion refused: iss is not an enabled client, or the assertion is not signed "
            "with that client's registered key and algorithm"
        )
        client = self.clients.get(iss)
        if client is None or client.disabled or header.get("alg") != client.alg:
            raise refused
        try:
            claims = verified_claims(unverified, self._public_key(client))
        except _DECODE_ERRORS as exc:
            raise refused from exc
        self._check_claims(client, claims)
        return client

    def _public_key(self, client: ClientRecord) -> PublicKey:
        hit = self._keys.get(client.client_id)
        if hit is None or hit[0] != client.jwk:
            hit = (client.jwk, client.public_key())
            self._keys[client.client_id] = hit
        return hit[1]

    def _check_claims(self, client: ClientRecord, claims: dict[str, Any]) -> None:
        now = self.clock()
        if claims.get("sub") != client.client_id:
            raise invalid_grant("assertion sub must equal iss (the client id)")
        aud = claims.get("aud")
        auds = aud if isinstance(aud, list) else [aud]
        if not any(isinstance(a, str) and a.rstrip("/") in self.audiences for a in auds):
            raise invalid_grant(f"assertion aud must be the token endpoint URL {self.issuer}/token")
        exp, nbf, iat = claims.get("exp"), claims.get("nbf", 0), claims.get("iat", 0)
        if exp is None:
            raise invalid_grant("assertion has no exp")
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (exp, nbf, iat)):
            raise invalid_grant("assertion exp/nbf/iat must be numbers")
        if exp + CLOCK_SKEW < now:
            raise invalid_grant("assertion expired")
        if exp > now + MAX_ASSERTION_LIFETIME + CLOCK_SKEW:
            raise invalid_grant(f"assertion exp is more than {MAX_ASSERTION_LIFETIME} s ahead")
        if nbf > now + CLOCK_SKEW:
            raise invalid_grant("assertion not valid yet (nbf in the future)")
        if iat > now + CLOCK_SKEW:
            raise invalid_grant("assertion iat is in the future")
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti or len(jti) > MAX_JTI_LENGTH:
            raise invalid_grant(f"assertion needs a jti (1-{MAX_JTI_LENGTH} characters)")
        try:
            first = self.jti.first_use(f"{client.client_id}:{jti}", float(exp) + CLOCK_SKEW)
        except ReplayStoreUnavailable as exc:  # fail closed: without the replay check, no token
            raise OAuthError(
                ErrorCode.TEMPORARILY_UNAVAILABLE, "replay store unavailable; retry shortly"
            ) from exc
        if not first:
            raise invalid_grant("assertion already used (jti replay)")

    def _granted_scopes(self, client: ClientRecord, scope: str | None) -> list[str]:
        if not scope:
            return list(client.scopes)
        requested = parse_scope_param(scope)
        extra = [s for s in requested if s not in client.scopes]
        if extra:
            raise OAuthError(
                ErrorCode.INVALID_SCOPE, f"scope(s) not granted to this client: {' '.join(extra)}"
            )
        return [s for s in client.scopes if s in requested]
