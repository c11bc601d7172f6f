"""Access tokens: JWTs per RFC 9068, signed by the token service and verified by every service.

Header ``{"alg": "ES256", "kid": <RFC 7638 thumbprint>, "typ": "at+jwt"}``; claims::

    iss        the token service's URL (AISLE_AUTH_URL)
    sub        the client id (also in ``client_id``)
    aud        "aisle"
    iat, nbf, exp   unix seconds; lifetime ACCESS_TOKEN_TTL (900 s)
    jti        random id
    scope      space-separated scopes (RFC 9068 section 2.2.3)
    tenants    the tenants the client may act on (Aisle claim)

Verification (RFC 9068 section 4) checks ``typ``, the algorithm allow-list, the signature with the key
named by ``kid``, ``iss``, ``aud``, ``exp`` and ``nbf``/``iat`` with :data:`CLOCK_SKEW`. A verified token
is cached by its exact bytes until it expires, so a client reusing its token pays a dict lookup (about a
microsecond) instead of a signature check (about 0.2 ms).
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any

import orjson
from joserfc import jws
from joserfc.errors import BadSignatureError, JoseError
from joserfc.jwk import ECKey, OKPKey, RSAKey
from joserfc.jws import CompactSignature, JWSRegistry

from aisle.core.auth.errors import InvalidToken

ACCESS_TOKEN_AUDIENCE = "aisle"
ACCESS_TOKEN_TTL = 900
ACCESS_TOKEN_TYPE = "at+jwt"
CLOCK_SKEW = 30
ALGORITHMS = ("RS256", "ES256", "EdDSA")
MAX_TOKEN_BYTES = 8192

PublicKey = RSAKey | ECKey | OKPKey
_KEY_ALGS = {"RSA": "RS256", "EC": "ES256", "OKP": "EdDSA"}
# One registry per algorithm: verification accepts exactly the key type's algorithm.
_REGISTRIES = {alg: JWSRegistry(algorithms=[alg]) for alg in ALGORITHMS}
# Exceptions joserfc and the JSON/base64 layers raise on hostile input; all mean "invalid token".
_DECODE_ERRORS = (JoseError, ValueError, TypeError, KeyError, IndexError, UnicodeError, OverflowError)


@dataclass(frozen=True)
class Principal:
    """Who a verified token speaks for: ``client_id``, ``tenants``, ``scopes``, ``expires_at`` (unix s)."""

    client_id: str
    tenants: frozenset[str]
    scopes: frozenset[str]
    expires_at: int


def sign_access_token(
    key: ECKey,
    kid: str,
    *,
    issuer: str,
    client_id: str,
    tenants: list[str],
    scopes: list[str] | tuple[str, ...],
    ttl: int = ACCESS_TOKEN_TTL,
    now: int | None = None,
    audience: str = ACCESS_TOKEN_AUDIENCE,
) -> str:
    """A signed access token (compact JWS) for ``client_id``; see the module docstring for the claims."""
    issued = int(time.time()) if now is None else now
    claims = {
        "iss": issuer,
        "sub": client_id,
        "aud": audience,
        "iat": issued,
        "nbf": issued,
        "exp": issued + ttl,
        "jti": secrets.token_urlsafe(12),
        "client_id": client_id,
        "scope": " ".join(scopes),
        "tenants": list(tenants),
    }
    header = {"alg": "ES256", "kid": kid, "typ": ACCESS_TOKEN_TYPE}
    return jws.serialize_compact(header, orjson.dumps(claims), key, registry=_REGISTRIES["ES256"])


def verified_claims(parsed: CompactSignature, key: PublicKey) -> dict[str, Any]:
    """The claims of a parsed compact JWS once joserfc has verified its signature with ``key``.

    The only algorithm accepted is the one ``key``'s type signs with (RS256, ES256 or EdDSA), so
    ``alg: none`` and HMAC keyed with a public key cannot pass (RFC 8725 section 3.1).

    Raises:
        JoseError: wrong algorithm for the key, or a bad signature.
        ValueError: a payload that is not a JSON object.
    """
    alg = _KEY_ALGS[key.key_type]
    if not jws.validate_compact(parsed, key, registry=_REGISTRIES[alg]):
        raise BadSignatureError()
    claims = orjson.loads(parsed.payload)
    if not isinstance(claims, dict):
        raise ValueError("claims are not a JSON object")
    return claims


def parse_access_token(token: str) -> CompactSignature:
    """Split a compact token and check its unverified header (to pick the key by ``kid``).

    Parsing once and verifying the parsed object (:func:`verified_claims`) saves a second parse.

    Raises:
        InvalidToken: oversized, not three base64url parts, a header that is not a JSON object, an
            algorithm off the allow-list, a wrong ``typ`` or no ``kid``.
    """
    if len(token) > MAX_TOKEN_BYTES:
        raise InvalidToken(f"token longer than {MAX_TOKEN_BYTES} bytes")
    try:
        parsed = jws.extract_compact(token.encode("ascii"))
        header = parsed.headers()
    except _DECODE_ERRORS as exc:
        raise InvalidToken("malformed token") from exc
    if not isinstance(header, dict):
        raise InvalidToken("malformed token header")
    if header.get("alg") not in ALGORITHMS:
        raise InvalidToken(f"algorithm '{header.get('alg')}' is not allowed")
    if header.get("typ") not in (ACCESS_TOKEN_TYPE, "application/at+jwt"):
        raise InvalidToken("not an access token (typ must be at+jwt)")
    if not isinstance(header.get("kid"), str):
        raise InvalidToken("token header has no kid")
    return parsed


def read_header(token: str) -> dict[str, Any]:
    """The checked, unverified header of an access token. Raises InvalidToken, see parse_access_token."""
    return parse_access_token(token).headers()


class TokenVerifier:
    """Verifies access tokens and caches the verified ones by their exact bytes until they expire.

    Args:
        issuer: expected ``iss`` (the token service's URL, trailing slash ignored).
        audience: expected member of ``aud``.
        cache_size: verified tokens kept; the cache is emptied when full.
    """

    def __init__(self, issuer: str, audience: str = ACCESS_TOKEN_AUDIENCE, cache_size: int = 10_000) -> None:
        self.issuer = issuer.rstrip("/")
        self.audience = audience
        self.cache_size = cache_size
        self._cache: dict[str, Principal] = {}
        self._lock = threading.Lock()

    def cached(self, token: str, now: float | None = None) -> Principal | None:
        """The principal of an already verified, unexpired token, else None."""
        principal = self._cache.get(token)
        if principal is None:
            return None
        if principal.expires_at + CLOCK_SKEW < (time.time() if now is None else now):
            self._cache.pop(token, None)
            return None
        return principal

    def verify(
        self, token: str, key: PublicKey, now: float | None = None, parsed: CompactSignature | None = None
    ) -> Principal:
        """Check signature and claims with ``key`` (the key named by the token's ``kid``).

        ``parsed`` is the token already split by :func:`parse_access_token` (parsed again when omitted).

        Raises:
            InvalidToken: a bad signature, an algorithm that does not match the key, a wrong ``iss`` or
                ``aud``, an expired or not-yet-valid token, or missing claims.
        """
        now = time.time() if now is None else now
        try:
            claims = verified_claims(parsed if parsed is not None else parse_access_token(token), key)
        except _DECODE_ERRORS as exc:
            raise InvalidToken("token signature or encoding is invalid") from exc
        principal = self._check_claims(claims, now)
        with self._lock:
            if len(self._cache) >= self.cache_size:
                self._cache.clear()
            self._cache[token] = principal
        return principal

    def _check_claims(self, claims: dict[str, Any], now: float) -> Principal:
        if str(claims.get("iss", "")).rstrip("/") != self.issuer:
            raise InvalidToken("token issued by another issuer")
        aud = claims.get("aud")
        if not (aud == self.audience or (isinstance(aud, list) and self.audience in aud)):
            raise InvalidToken(f"token audience is not '{self.audience}'")
        exp, nbf, iat = claims.get("exp"), claims.get("nbf", 0), claims.get("iat", 0)
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (exp, nbf, iat)):
            raise InvalidToken("token exp/nbf/iat must be numbers")
        if exp + CLOCK_SKEW < now:  # type: ignore[operator]
            raise InvalidToken("token expired")
        if nbf > now + CLOCK_SKEW or iat > now + CLOCK_SKEW:  # type: ignore[operator]
            raise InvalidToken("token not valid yet")
        client_id, scope, tenants = (
            claims.get("client_id", claims.get("sub")),
            claims.get("scope"),
            claims.get("tenants"),
        )
        if not isinstance(client_id, str) or not isinstance(scope, str) or not isinstance(tenants, list):
            raise InvalidToken("token lacks client_id, scope or tenants")
        return Principal(
            client_id=client_id,
            tenants=frozenset(t for t in tenants if isinstance(t, str)),
            scopes=frozenset(scope.split()),
            expires_at=int(exp),  # type: ignore[arg-type]
        )
