"""Registered clients: who may ask for tokens, with which key, for which tenants and scopes.

Stored in object storage at ``_auth/clients/<client_id>.json`` (a prefix no tenant can have: tenant names
never start with ``_``). A record holds the client's *public* key only; the private key is printed once by
``aisle auth add-client`` and never stored.
"""

from __future__ import annotations

import logging
import re
import secrets
import threading
import time
from typing import Any

import orjson
from joserfc.jwk import ECKey, OKPKey, RSAKey
from pydantic import BaseModel, Field, ValidationError, field_validator

from aisle.core.auth.scopes import check_scopes
from aisle.core.errors import BadRequest, ErrorCode
from aisle.core.storage import BlobNotFound, BlobStore, PrefixBlobStore
from aisle.core.tenancy import check_tenant_name

log = logging.getLogger("aisle.auth")

CLIENTS_PREFIX = "_auth/clients"
CLIENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
ClientKey = RSAKey | ECKey | OKPKey
PublicKey = ClientKey

# The one algorithm each key type may sign with (RFC 7518 section 3.1, RFC 8037 section 3.1):
# pinning it per key is what makes "alg: none" and HMAC-with-the-public-key impossible.
ALG_FOR_KEY = {"RSA": "RS256", "EC": "ES256", "OKP": "EdDSA"}


def check_client_id(client_id: str) -> str:
    """Return ``client_id`` when valid (1-64 of letters, digits, ``.``, ``_``, ``-``). Raises BadRequest."""
    if not CLIENT_ID.match(client_id or ""):
        raise BadRequest(
            f"client id '{client_id}' is invalid: use 1-64 letters, digits, '.', '_' or '-'",
            code=ErrorCode.CLIENT_ID_INVALID,
        )
    return client_id


def new_client_id() -> str:
    return f"client-{secrets.token_hex(6)}"


def public_key_alg(jwk: dict[str, Any]) -> str:
    """The signing algorithm allowed for a public JWK. Raises BadRequest for other key types or curves."""
    kty, crv = jwk.get("kty"), jwk.get("crv")
    if (kty == "EC" and crv != "P-256") or (kty == "OKP" and crv != "Ed25519") or kty not in ALG_FOR_KEY:
        raise BadRequest(
            f"unsupported client key (kty={kty}, crv={crv}): "
            "use RSA (RS256), EC P-256 (ES256) or Ed25519 (EdDSA)",
            code=ErrorCode.CLIENT_KEY_INVALID,
        )
    if "d" in jwk or "p" in jwk:
        raise BadRequest("a client record must hold the public key only", code=ErrorCode.CLIENT_KEY_INVALID)
    return ALG_FOR_KEY[str(kty)]


def _as_value_error(check: Any, value: Any) -> Any:
    try:
        return check(value)
    except BadRequest as exc:
        raise ValueError(exc.message) from exc


class ClientRecord(BaseModel):
    """One registered client, as stored in ``_auth/clients/<client_id>.json``."""

    client_id: str
    tenants: list[str] = Field(min_length=1, description="Tenants the client's tokens may act on.")
    scopes: list[str] = Field(
        min_length=1, description="Scopes its tokens carry (see aisle.core.auth.scopes)."
    )
    jwk: dict[str, Any] = Field(description="Public JWK the client's assertions are verified with.")
    created_at: int = Field(default_factory=lambda: int(time.time()), description="Unix seconds.")
    disabled: bool = False

    # Validators turn BadRequest into ValueError so pydantic reports a ValidationError naming the field.
    @field_validator("client_id")
    @classmethod
    def _client_id(cls, v: str) -> str:
        return _as_value_error(check_client_id, v)

    @field_validator("tenants")
    @classmethod
    def _tenants(cls, v: list[str]) -> list[str]:
        return sorted({_as_value_error(check_tenant_name, t) for t in v})

    @field_validator("scopes")
    @classmethod
    def _scopes(cls, v: list[str]) -> list[str]:
        return list(_as_value_error(check_scopes, v))

    @field_validator("jwk")
    @classmethod
    def _jwk(cls, v: dict[str, Any]) -> dict[str, Any]:
        _as_value_error(public_key_alg, v)
        return v

    @property
    def alg(self) -> str:
        return public_key_alg(self.jwk)

    def public_key(self) -> ClientKey:
        return _KEY_CLASS[str(self.jwk["kty"])].import_key(self.jwk)


_KEY_CLASS: dict[str, Any] = {"RSA": RSAKey, "EC": ECKey, "OKP": OKPKey}


def generate_client_key(alg: str = "ES256") -> ClientKey:
    """A new private key for ``alg`` (ES256: P-256, RS256: RSA 2048, EdDSA: Ed25519)."""
    if alg == "ES256":
        return ECKey.generate_key("P-256")
    if alg == "RS256":
        return RSAKey.generate_key(2048)
    if alg == "EdDSA":
        return OKPKey.generate_key("Ed25519")
    raise BadRequest(
        f"unsupported key algorithm '{alg}': use ES256, RS256 or EdDSA", code=ErrorCode.CLIENT_KEY_INVALID
    )


def _import_pem(pem: bytes) -> ClientKey:
    for cls in (ECKey, RSAKey, OKPKey):
        try:
            key: ClientKey = cls.import_key(pem)
        except Exception:  # joserfc raises several types for a key of another family
            continue
        public_key_alg(public_jwk(key))
        return key
    raise BadRequest("not a PEM RSA, EC P-256 or Ed25519 key", code=ErrorCode.CLIENT_KEY_INVALID)


def public_jwk(key: ClientKey) -> dict[str, Any]:
    """The public members of a key as a JWK dict (no ``kid``, no private members)."""
    jwk = key.as_dict(private=False)
    return {k: v for k, v in jwk.items() if k in ("kty", "crv", "x", "y", "n", "e")}


def load_public_key_pem(pem: bytes) -> dict[str, Any]:
    """The public JWK of a PEM public or private key. Raises BadRequest for an unreadable/unsupported key."""
    return public_jwk(_import_pem(pem))


def load_private_key(pem: bytes) -> ClientKey:
    """A client's private key from PEM. Raises BadRequest when unreadable, unsupported or public only."""
    key = _import_pem(pem)
    if not key.is_private:
        raise BadRequest(
            "this PEM holds a public key; the private key is needed", code=ErrorCode.CLIENT_KEY_INVALID
        )
    return key


class ClientRegistry:
    """Reads and writes client records; lookups are cached for ``ttl`` seconds (misses too).

    A client added, changed or disabled is seen by the token service at most ``ttl`` seconds later.
    """

    def __init__(self, store: BlobStore, ttl: float = 5.0) -> None:
        self.store = PrefixBlobStore(store, CLIENTS_PREFIX)
        self.ttl = ttl
        self._cache: dict[str, tuple[float, ClientRecord | None]] = {}
        self._lock = threading.Lock()

    def entry_count(self) -> int:
        """Client lookups held (hits and misses)."""
        return len(self._cache)

    def get(self, client_id: str) -> ClientRecord | None:
        """The record of ``client_id``; None when unknown, its id is malformed or its record is invalid."""
        if not CLIENT_ID.match(client_id or ""):
            return None
        now = time.monotonic()
        hit = self._cache.get(client_id)
        if hit is not None and now - hit[0] < self.ttl:
            return hit[1]
        try:
            record: ClientRecord | None = ClientRecord.model_validate(
                orjson.loads(self.store.get(f"{client_id}.json"))
            )
        except BlobNotFound:
            record = None
        except (orjson.JSONDecodeError, ValidationError):
            log.error("client record _auth/clients/%s.json is invalid; the client is refused", client_id)
            record = None
        with self._lock:
            if len(self._cache) > 100_000:
                self._cache.clear()
            self._cache[client_id] = (now, record)
        return record

    def put(self, record: ClientRecord) -> None:
        """Create or replace a record."""
        self.store.put(f"{record.client_id}.json", record.model_dump_json(indent=2).encode())
        with self._lock:
            self._cache.pop(record.client_id, None)

    def delete(self, client_id: str) -> None:
        self.store.delete(f"{check_client_id(client_id)}.json")
        with self._lock:
            self._cache.pop(client_id, None)

    def list(self) -> list[ClientRecord]:
        """Every registered client with a valid record, sorted by id (invalid records are logged)."""
        out = []
        for path in sorted(self.store.list("")):
            if path.endswith(".json"):
                record = self.get(path[: -len(".json")])
                if record is not None:
                    out.append(record)
        return out
