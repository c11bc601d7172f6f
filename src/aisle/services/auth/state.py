"""The token service's lifespan state, and the dependencies routes reach it through."""

from __future__ import annotations

from typing import Annotated, TypedDict

from fastapi import Depends, Request

from aisle.core.auth.grant import JwtBearerGrant
from aisle.core.auth.keys import SigningKeys


class AuthState(TypedDict):
    """Lifespan state (opened by ``create_app``'s lifespan), reached by routes through ``request.state``."""

    grant: JwtBearerGrant
    keys: SigningKeys


async def get_grant(request: Request) -> JwtBearerGrant:
    return request.state.grant  # type: ignore[no-any-return]


async def get_keys(request: Request) -> SigningKeys:
    return request.state.keys  # type: ignore[no-any-return]


Grant = Annotated[JwtBearerGrant, Depends(get_grant)]
"""A route parameter typed ``Grant`` receives the JWT bearer grant (clients, keys, replay memory)."""

Keys = Annotated[SigningKeys, Depends(get_keys)]
"""A route parameter typed ``Keys`` receives the signing keys."""
