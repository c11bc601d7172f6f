"""The token service's own signing keys, in object storage.

Two copies of each key, so services never need the private half:

* ``_auth/keys/<kid>.json``: the private key, read only by the token service (and ``aisle auth``);
* ``_auth/public/<kid>.json``: its public half, read by services that take their keys from storage
  (:func:`published_jwks`). An operator can grant services read access to ``_auth/public/`` only.

Keys are ES256 (P-256): about 0.06 ms to sign and 0.1-0.2 ms to verify with joserfc, so issuing stays fast
and resource servers verify a new token well under their 0.3 ms budget. The ``kid`` is the key's RFC 7638
thumbprint.

Rotation (:meth:`SigningKeys.rotate`) adds a new active key and retires the others. A retired key stays
published until ``publish_until`` = retirement + :attr:`SigningKeys.grace` (token lifetime + this cache's
refresh interval + clock skew), i.e. until every token it signed has expired, and is deleted after that.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import orjson
from joserfc.jwk import ECKey
from pydantic import BaseModel

from aisle.core.storage import BlobStore, PrefixBlobStore

KEYS_PREFIX = "_auth/keys"
PUBLIC_PREFIX = "_auth/public"
SERVICE_ALG = "ES256"
_PUBLIC_MEMBERS = ("kty", "crv", "x", "y", "n", "e")


class StoredKey(BaseModel):
    """One signing key as stored: JWK (private or public copy), times in unix seconds."""

    kid: str
    alg: str = SERVICE_ALG
    jwk: dict[str, Any]
    created_at: int
    retired_at: int | None = None
    publish_until: int | None = None

    def public(self) -> StoredKey:
        """The copy for ``_auth/public/``: same record, public JWK members only."""
        return self.model_copy(update={"jwk": {k: v for k, v in self.jwk.items() if k in _PUBLIC_MEMBERS}})

    def public_jwk(self) -> dict[str, Any]:
        """The RFC 7517 public JWK with ``kid``, ``alg`` and ``use``."""
        return {**self.public().jwk, "kid": self.kid, "alg": self.alg, "use": "sig"}

    def is_published(self, now: float) -> bool:
        return self.publish_until is None or self.publish_until > now


def _read(store: PrefixBlobStore) -> list[StoredKey]:
    keys = [
        StoredKey.model_validate(orjson.loads(store.get(path)))
        for path in store.list("")
        if path.endswith(".json")
    ]
    return sorted(keys, key=lambda k: (k.created_at, k.kid))


def published_jwks(store: BlobStore, now: float | None = None) -> dict[str, list[dict[str, Any]]]:
    """The RFC 7517 JWK Set of the published keys, read from ``_auth/public/`` (no private key read)."""
    now = time.time() if now is None else now
    return {
        "keys": [k.public_jwk() for k in _read(PrefixBlobStore(store, PUBLIC_PREFIX)) if k.is_published(now)]
    }


def new_stored_key(now: int) -> StoredKey:
    key = ECKey.generate_key("P-256")
    return StoredKey(kid=key.thumbprint(), jwk=key.as_dict(private=True), created_at=now)


class SigningKeys:
    """The key ring: the active signing key and the published public keys.

    Args:
        store: object storage (the root, not a tenant scope).
        token_ttl: lifetime of the access tokens signed with these keys, seconds.
        refresh: how long a read of the ring is cached, seconds; a rotation by another process (the CLI)
            is picked up within this time.
        skew: clock skew allowed by verifiers, seconds.
        clock: the wall clock, Unix seconds (``time.time``): when keys are created, retired and
            stop being published.
    """

    def __init__(
        self,
        store: BlobStore,
        *,
        token_ttl: int = 900,
        refresh: float = 10.0,
        skew: int = 30,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = PrefixBlobStore(store, KEYS_PREFIX)
        self.public_store = PrefixBlobStore(store, PUBLIC_PREFIX)
        self.token_ttl = token_ttl
        self.refresh = refresh
        self.grace = token_ttl + int(refresh) + skew
        self.clock = clock
        self._cache: tuple[float, list[StoredKey]] | None = None
        self._signer: tuple[str, ECKey] | None = None
        self._lock = threading.Lock()

    def _save(self, key: StoredKey) -> None:
        # Public half first: a key is published before anything can be signed with it.
        self.public_store.put(f"{key.kid}.json", key.public().model_dump_json().encode())
        self.store.put(f"{key.kid}.json", key.model_dump_json().encode())

    def keys(self, *, fresh: bool = False) -> list[StoredKey]:
        """Every stored private key, oldest first (cached for ``refresh`` seconds unless ``fresh``)."""
        now = time.monotonic()
        cached = self._cache
        if not fresh and cached is not None and now - cached[0] < self.refresh:
            return cached[1]
        keys = _read(self.store)
        self._cache = (now, keys)
        return keys

    def active(self) -> tuple[str, ECKey]:
        """``(kid, private key)`` to sign with: the newest unretired key, created when there is none."""
        live = [k for k in self.keys() if k.retired_at is None]
        if not live:
            with self._lock:
                live = [k for k in self.keys(fresh=True) if k.retired_at is None]
                if not live:
                    self._save(new_stored_key(int(self.clock())))
                    live = [k for k in self.keys(fresh=True) if k.retired_at is None]
        newest = live[-1]
        signer = self._signer
        if signer is None or signer[0] != newest.kid:
            signer = (newest.kid, ECKey.import_key(newest.jwk))
            self._signer = signer
        return signer

    def published(self, now: float | None = None) -> list[StoredKey]:
        """Keys whose tokens may still be valid: unretired ones and those retired less than ``grace`` ago."""
        now = self.clock() if now is None else now
        return [k for k in self.keys() if k.is_published(now)]

    def jwks(self) -> dict[str, list[dict[str, Any]]]:
        """The RFC 7517 section 5 JWK Set of :meth:`published` keys (public parts only)."""
        return {"keys": [k.public_jwk() for k in self.published()]}

    def rotate(self) -> StoredKey:
        """Make a new active key, retire the current ones, delete keys no longer published.

        Returns the new key. Tokens signed with a retired key keep validating until they expire.
        """
        now = int(self.clock())
        created = new_stored_key(now)
        self._save(created)
        for key in _read(self.store):
            if key.kid == created.kid:
                continue
            if key.retired_at is None:
                self._save(key.model_copy(update={"retired_at": now, "publish_until": now + self.grace}))
            elif not key.is_published(now):
                self.store.delete(f"{key.kid}.json")
                self.public_store.delete(f"{key.kid}.json")
        self._cache = None
        return created
