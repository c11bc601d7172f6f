"""Authentication: OAuth 2.0 JWT bearer grant (RFC 7523) and access-token validation (RFC 6750).

Layout:
    scopes.py        the scope names and which endpoints need them
    errors.py        401/403 errors for resource servers and RFC 6749 errors for the token endpoint
    clients.py       registered clients (public key, tenants, scopes) in object storage
    keys.py          the token service's own signing keys, with rotation
    replay.py        the single-use ``jti`` store protocol (+ replay_memory.py, replay_redis.py)
    replay_resolver.py  which of them ``open_jti_store`` opens
    assertion.py     building a client assertion (the client side of RFC 7523)
    grant.py         the token endpoint's engine: assertion in, access token out
    tokens.py        access-token claims, signing and cached verification
    jwks.py          where a resource server gets the public keys (JWKS over HTTP, or storage)
    dependencies.py  the FastAPI dependency every service uses: :class:`Authorizer`
"""
