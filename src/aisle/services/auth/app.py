"""The token service application: ``create_app(settings) -> FastAPI`` (port 8086)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from aisle.core.auth.clients import ClientRegistry
from aisle.core.auth.errors import OAuthError
from aisle.core.auth.grant import JwtBearerGrant
from aisle.core.auth.keys import SigningKeys
from aisle.core.auth.replay import JtiStore
from aisle.core.auth.replay_resolver import open_jti_store
from aisle.core.auth.tokens import ACCESS_TOKEN_TTL
from aisle.core.config import Settings, load_settings
from aisle.core.storage import BlobStore
from aisle.core.storage.resolver import open_blob_store_from_settings
from aisle.services.auth.routes import NO_STORE, router
from aisle.services.auth.state import AuthState
from aisle.services.common.app import service_app


def create_app(
    settings: Settings | None = None,
    *,
    store: BlobStore | None = None,
    jti_store: JtiStore | None = None,
    token_ttl: int = ACCESS_TOKEN_TTL,
) -> FastAPI:
    """Build the token service.

    Args:
        settings: process settings (default: from the environment, as ``uvicorn --factory`` calls it);
            ``auth_url`` is the issuer (``iss`` of tokens; assertions' ``aud`` is ``{auth_url}/token``),
            ``storage_url`` holds clients and keys, ``redis_url`` (if set) the replay memory.
        store: object storage to use instead of opening ``settings.storage_url``.
        jti_store: replay memory to use instead of the one chosen from ``settings.redis_url``.
        token_ttl: access-token lifetime, seconds.
    """

    settings = settings if settings is not None else load_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[AuthState]:
        blobs = store if store is not None else open_blob_store_from_settings(settings)
        keys = SigningKeys(blobs, token_ttl=token_ttl)
        keys.active()  # create the first key now, so the JWKS is never empty
        clients = ClientRegistry(blobs)
        app.state.metrics.add_caches({"clients": clients.entry_count})
        grant = JwtBearerGrant(
            clients,
            keys,
            jti_store if jti_store is not None else open_jti_store(settings.redis_url),
            issuer=settings.auth_url,
            token_ttl=token_ttl,
        )
        yield {"grant": grant, "keys": keys}

    app = service_app(
        "auth",
        title="Aisle token service",
        description="OAuth 2.0 JWT bearer grant (RFC 7523); public keys at /.well-known/jwks.json.",
        routers=[router],
        lifespan=lifespan,
        server_timing=False,
        settings=settings,
    )

    @app.exception_handler(OAuthError)
    async def _oauth(_: Request, exc: OAuthError) -> JSONResponse:
        retry = {"Retry-After": "1"} if exc.status == 503 else {}  # temporarily_unavailable: transient
        return JSONResponse(exc.to_dict(), status_code=exc.status, headers=NO_STORE | retry)

    return app
