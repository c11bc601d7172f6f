"""Service account keys for Google's stand-in: made here, and the JWT assertions they sign checked.

A key file has Google's published shape (``type: service_account``, ``private_key``, ``client_email``,
``token_uri``); ``google-auth`` signs an RS256 JWT with it and posts it to ``token_uri`` (RFC 7523), which
the tests point at the stand-in.
"""

from __future__ import annotations

import base64
import functools
import json
import time
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa


@functools.cache
def _rsa_key(email: str) -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)  # ~0.1-0.5 s: once per email


def service_account_key(email: str, token_uri: str) -> tuple[dict[str, Any], bytes]:
    """A service account key for ``email`` (the JSON Google hands out) and its public key PEM."""
    key = _rsa_key(email)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    info = {
        "type": "service_account",
        "project_id": "aisle-test",
        "private_key_id": "test-key-1",
        "private_key": private,
        "client_email": email,
        "client_id": "1",
        "token_uri": token_uri,
    }
    return info, public


def _b64(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def verify_assertion(assertion: str, trusted: dict[str, bytes], audience: str) -> bool:
    """Whether ``assertion`` is an unexpired RS256 JWT for ``audience`` signed by its issuer's key."""
    try:
        header, payload, signature = assertion.split(".")
        claims = json.loads(_b64(payload))
        pem = trusted.get(claims.get("iss", ""))
        if pem is None or json.loads(_b64(header)).get("alg") != "RS256":
            return False
        public = serialization.load_pem_public_key(pem)
        public.verify(  # type: ignore[union-attr, call-arg]
            _b64(signature), f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256()
        )
    except (ValueError, InvalidSignature):
        return False
    return bool(claims.get("aud") == audience and claims.get("exp", 0) > time.time())
