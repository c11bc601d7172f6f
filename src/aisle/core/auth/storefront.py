"""Tokens of a storefront page: what the shop's own server hands the browser, and what it relays with.

A page must never hold a token that can change anything (Algolia's "search-only API key" is the model):
:meth:`StorefrontTokens.page_token` signs a token for **one** tenant with the read scopes only
(``search:read recs:read``), client id ``storefront``, valid :data:`PAGE_TOKEN_TTL` seconds. The page's
shopper events (clicks, carts, purchases) go through the storefront's relay, which checks the page's
token and forwards them to the edit service's ``POST /events`` with :meth:`relay_token`: ``recs:write``
for that tenant, a minute long, never given to the page.

Both are signed in-process with the active key of the token service's key ring (the bucket's
:class:`~aisle.core.auth.keys.SigningKeys`, the same keys ``POST /token`` signs with), so every service
verifies them like any access token. A shop's own back end would get its page tokens from
``POST /token`` with its client's key and ``scope=search:read recs:read`` instead.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from aisle.core.auth.keys import SigningKeys
from aisle.core.auth.scopes import RECS_READ, RECS_WRITE, SEARCH_READ
from aisle.core.auth.tokens import sign_access_token

STOREFRONT_CLIENT_ID = "storefront"
PAGE_SCOPES = (SEARCH_READ, RECS_READ)
PAGE_TOKEN_TTL = 900
"""Seconds a page token lives (the page asks for a new one when a request answers 401)."""
RELAY_TOKEN_TTL = 60
RELAY_TOKEN_MARGIN = 15
"""A relay token is reused until this many seconds before it expires."""


@dataclass(frozen=True)
class PageToken:
    """``token``: the JWT; ``expires_in``: seconds; ``scopes``: what it allows; ``tenant``: its one tenant."""

    token: str
    expires_in: int
    scopes: tuple[str, ...]
    tenant: str


class StorefrontTokens:
    """Signs page and relay tokens with ``keys``' active key for issuer ``issuer`` (AISLE_AUTH_URL).

    ``clock``: Unix seconds (``time.time``), for the relay token cache.
    """

    def __init__(self, keys: SigningKeys, issuer: str, clock: Callable[[], float] = time.time) -> None:
        self.keys = keys
        self.issuer = issuer.rstrip("/")
        self.clock = clock
        self._relay: dict[str, tuple[float, str]] = {}
        self._lock = threading.Lock()

    def _sign(self, tenant: str, scopes: tuple[str, ...], ttl: int, now: int) -> str:
        kid, key = self.keys.active()
        return sign_access_token(
            key,
            kid,
            issuer=self.issuer,
            client_id=STOREFRONT_CLIENT_ID,
            tenants=[tenant],
            scopes=scopes,
            ttl=ttl,
            now=now,
        )

    def page_token(self, tenant: str) -> PageToken:
        """A read-only token for ``tenant`` (``search:read recs:read``), :data:`PAGE_TOKEN_TTL` seconds."""
        token = self._sign(tenant, PAGE_SCOPES, PAGE_TOKEN_TTL, int(self.clock()))
        return PageToken(token=token, expires_in=PAGE_TOKEN_TTL, scopes=PAGE_SCOPES, tenant=tenant)

    def relay_token(self, tenant: str) -> str:
        """A ``recs:write`` token for ``tenant`` to relay shopper events with (cached; never to a page)."""
        now = self.clock()
        with self._lock:
            cached = self._relay.get(tenant)
            if cached is not None and cached[0] - RELAY_TOKEN_MARGIN > now:
                return cached[1]
            token = self._sign(tenant, (RECS_WRITE,), RELAY_TOKEN_TTL, int(now))
            self._relay[tenant] = (now + RELAY_TOKEN_TTL, token)
            return token
