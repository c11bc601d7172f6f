"""Helpers for tests and benchmarks of anything behind the Authorizer (like haystack's ``testing`` package).

:class:`AuthKit` holds a token service's state over one BlobStore: register clients, build assertions, mint
access tokens (good ones through the real signing key, bad ones with any header or claims), and
:func:`serve` runs an ASGI app on a loopback port with uvicorn for tests that need real HTTP.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson
import uvicorn
from joserfc import jwt

from aisle.core.auth.assertion import make_assertion
from aisle.core.auth.clients import ClientKey, ClientRecord, ClientRegistry, generate_client_key, public_jwk
from aisle.core.auth.keys import SigningKeys
from aisle.core.auth.scopes import SCOPES
from aisle.core.auth.tokens import ACCESS_TOKEN_AUDIENCE, ACCESS_TOKEN_TTL, sign_access_token
from aisle.core.config import Settings
from aisle.core.storage import BlobStore


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class AuthKit:
    """Auth state for tests: clients and keys in ``store``, tokens for ``auth_url``.

    Args:
        store: the object storage the services under test read.
        auth_url: the token service URL the services expect as issuer (``AISLE_AUTH_URL``).
    """

    def __init__(self, store: BlobStore, auth_url: str = "http://testserver") -> None:
        self.store = store
        self.auth_url = auth_url.rstrip("/")
        self.clients = ClientRegistry(store, ttl=0)
        self.keys = SigningKeys(store, refresh=0.0)

    def settings(self, **overrides: Any) -> Settings:
        """Settings with auth on and this kit's ``auth_url``."""
        return Settings(**{"auth": "on", "auth_url": self.auth_url, **overrides})

    def add_client(
        self,
        client_id: str,
        tenants: list[str],
        scopes: list[str] | tuple[str, ...] = SCOPES,
        alg: str = "ES256",
    ) -> ClientKey:
        """Register a client; returns its private key."""
        key = generate_client_key(alg)
        record = ClientRecord(client_id=client_id, tenants=tenants, scopes=list(scopes), jwk=public_jwk(key))
        self.clients.put(record)
        return key

    def assertion(self, client_id: str, key: ClientKey, **kwargs: Any) -> str:
        """A valid assertion for ``{auth_url}/token`` (keyword arguments go to :func:`make_assertion`)."""
        return make_assertion(client_id, key, f"{self.auth_url}/token", **kwargs)

    def token(
        self,
        tenants: list[str],
        scopes: list[str] | tuple[str, ...] = SCOPES,
        client_id: str = "test-client",
        ttl: int = ACCESS_TOKEN_TTL,
        now: int | None = None,
    ) -> str:
        """A valid access token signed by the service's active key (what ``POST /token`` would return)."""
        kid, key = self.keys.active()
        return sign_access_token(
            key,
            kid,
            issuer=self.auth_url,
            client_id=client_id,
            tenants=tenants,
            scopes=scopes,
            ttl=ttl,
            now=now,
        )

    def claims(self, tenants: list[str], scopes: list[str] | tuple[str, ...] = SCOPES) -> dict[str, Any]:
        """The claims of a valid access token, to alter before :meth:`forge`."""
        now = int(time.time())
        return {
            "iss": self.auth_url,
            "sub": "test-client",
            "aud": ACCESS_TOKEN_AUDIENCE,
            "iat": now,
            "nbf": now,
            "exp": now + 600,
            "jti": "t",
            "client_id": "test-client",
            "scope": " ".join(scopes),
            "tenants": tenants,
        }

    def forge(self, claims: dict[str, Any], header: dict[str, Any] | None = None, key: Any = None) -> str:
        """A token with the given claims signed by ``key`` (default: the service's real active key)."""
        kid, active = self.keys.active()
        head = {"alg": "ES256", "kid": kid, "typ": "at+jwt", **(header or {})}
        return jwt.encode(head, claims, key if key is not None else active, algorithms=[head["alg"]])

    def hmac_signed(self, claims: dict[str, Any], header: dict[str, Any], secret: bytes) -> str:
        """An HS256 token keyed with ``secret`` (the attacker's side of "HMAC with the public key").

        Built with the stdlib because joserfc rightly refuses a public key as an HMAC secret.
        """
        signing_input = f"{b64url(orjson.dumps(header))}.{b64url(orjson.dumps(claims))}"
        mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
        return f"{signing_input}.{b64url(mac)}"

    def public_pem(self) -> bytes:
        """The active signing key's public PEM (what an attacker can get from the JWKS)."""
        _, key = self.keys.active()
        return bytes(key.as_pem(private=False))

    def unsigned(self, claims: dict[str, Any], header: dict[str, Any]) -> str:
        """A compact token with an empty signature (``alg: none`` attacks)."""
        return f"{b64url(orjson.dumps(header))}.{b64url(orjson.dumps(claims))}."


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve(app: Any, port: int | None = None) -> Iterator[str]:
    """Run ``app`` with uvicorn on 127.0.0.1 in a thread (lifespan on); yields its base URL; stops on exit."""
    port = port or free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"uvicorn did not start on port {port}")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
