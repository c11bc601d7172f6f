"""Where a resource server finds the token service's public keys, and their cache.

Two sources, one interface (:class:`JwksSource`):

* :class:`HttpJwksSource`: ``GET {AISLE_AUTH_URL}/.well-known/jwks.json`` with httpx (the default);
* :class:`StoreJwksSource`: the public keys in object storage (``_auth/public/``), read directly. Used when a
  service hands its BlobStore to the Authorizer: no network hop and no start-up order between services.

:class:`PublicKeyCache` keeps the parsed keys, refreshes them every ``ttl`` seconds and on an unknown
``kid`` (a rotation), but at most once per ``min_interval`` seconds so random ``kid`` values cannot turn
requests into fetches.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

import httpx
from joserfc.jwk import ECKey, OKPKey, RSAKey

from aisle.core.auth.keys import published_jwks
from aisle.core.auth.tokens import ALGORITHMS, PublicKey
from aisle.core.errors import ErrorCode, Unavailable
from aisle.core.storage import BlobStore

log = logging.getLogger("aisle.auth")
_KEY_CLASS: dict[str, Any] = {"RSA": RSAKey, "EC": ECKey, "OKP": OKPKey}


class JwksSource(Protocol):
    """Fetches an RFC 7517 JWK Set document."""

    async def fetch(self) -> dict[str, Any]:
        """The JWKS ``{"keys": [...]}``. Raises :class:`Unavailable` when it cannot be read."""
        ...


class HttpJwksSource:
    """The token service's ``/.well-known/jwks.json`` over HTTP.

    Args:
        url: the JWKS URL.
        transport: an httpx transport (tests pass the token service's ASGI app).
        timeout: seconds per fetch.
    """

    def __init__(
        self, url: str, transport: httpx.AsyncBaseTransport | None = None, timeout: float = 3.0
    ) -> None:
        self.url, self.transport, self.timeout = url, transport, timeout

    async def fetch(self) -> dict[str, Any]:
        # A client per fetch: fetches are rare and a client must not outlive the event loop it was made on.
        try:
            async with httpx.AsyncClient(transport=self.transport, timeout=self.timeout) as client:
                response = await client.get(self.url)
                response.raise_for_status()
                doc = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise Unavailable(
                f"cannot read the token service's keys from {self.url}: {exc}",
                code=ErrorCode.AUTH_UNAVAILABLE,
            ) from exc
        if not isinstance(doc, dict) or not isinstance(doc.get("keys"), list):
            raise Unavailable(f"{self.url} did not return a JWK Set", code=ErrorCode.AUTH_UNAVAILABLE)
        return doc


class StoreJwksSource:
    """The published public keys in object storage, ``_auth/public/`` (read in a worker thread)."""

    def __init__(self, store: BlobStore) -> None:
        self.store = store

    async def fetch(self) -> dict[str, Any]:
        return await asyncio.to_thread(published_jwks, self.store)


def parse_jwks(doc: dict[str, Any]) -> dict[str, PublicKey]:
    """``kid -> public key`` for the usable keys of a JWKS: signature keys with an allowed algorithm."""
    out: dict[str, PublicKey] = {}
    for jwk in doc.get("keys", []):
        if not isinstance(jwk, dict) or not isinstance(jwk.get("kid"), str):
            continue
        if (
            jwk.get("use", "sig") != "sig"
            or jwk.get("alg") not in ALGORITHMS
            or jwk.get("kty") not in _KEY_CLASS
        ):
            continue
        public = {k: v for k, v in jwk.items() if k not in ("d", "p", "q", "dp", "dq", "qi")}
        try:
            out[jwk["kid"]] = _KEY_CLASS[jwk["kty"]].import_key(public)
        except Exception:  # a malformed entry must not hide the good ones
            log.warning("ignoring an unreadable key %s in the JWKS", jwk.get("kid"))
    return out


class PublicKeyCache:
    """``kid -> key`` from a :class:`JwksSource`, refreshed every ``ttl`` s and on an unknown ``kid``.

    One fetch at a time: a request that needs keys while a fetch is in flight waits for that fetch
    rather than starting another or failing (a fresh replica's first concurrent requests all wait for
    its first fetch; before, all but one were answered 503 ``auth_unavailable``).

    Args:
        source: where the JWKS comes from.
        ttl: seconds before the keys are re-read (drops keys the token service stopped publishing).
        min_interval: least seconds between two fetches triggered by unknown ``kid`` values.
        clock: monotonic seconds (injected by tests that step past ``min_interval`` or ``ttl``).
    """

    def __init__(
        self,
        source: JwksSource,
        ttl: float = 300.0,
        min_interval: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.source, self.ttl, self.min_interval, self.clock = source, ttl, min_interval, clock
        self._keys: dict[str, PublicKey] = {}
        self._fetched_at = float("-inf")
        self._pending: asyncio.Task[None] | None = None

    async def get(self, kid: str) -> PublicKey | None:
        """The key named ``kid``, or None when the token service does not publish it.

        Raises:
            Unavailable (``auth_unavailable``, 503): the keys cannot be fetched and none are cached.
        """
        age = self.clock() - self._fetched_at
        if age > self.ttl or (kid not in self._keys and (age > self.min_interval or self._in_flight())):
            await self.refresh()
        elif not self._keys:
            raise Unavailable(
                "the token service's keys are not available yet; retry shortly",
                code=ErrorCode.AUTH_UNAVAILABLE,
            )
        return self._keys.get(kid)

    def _in_flight(self) -> bool:
        """A fetch started on this event loop has not finished."""
        pending = self._pending
        return pending is not None and not pending.done() and pending.get_loop() is asyncio.get_running_loop()

    async def refresh(self) -> None:
        """Re-read the keys (or wait for the fetch in flight); on failure keep the cached ones (if any)
        and log a warning.

        Raises:
            Unavailable: the fetch failed and no keys are cached.
        """
        if not self._in_flight():
            self._fetched_at = self.clock()
            self._pending = asyncio.create_task(self._fetch())
            # its error is raised to every waiter; marked retrieved even if all of them were cancelled
            self._pending.add_done_callback(lambda t: t.cancelled() or t.exception())
        assert self._pending is not None
        # shielded: a waiter cancelled (its client went away) must not cancel the others' fetch
        await asyncio.shield(self._pending)

    async def _fetch(self) -> None:
        try:
            self._keys = parse_jwks(await self.source.fetch())
        except Unavailable:
            if not self._keys:
                raise
            log.warning("token service keys could not be refreshed; using the cached ones", exc_info=True)
