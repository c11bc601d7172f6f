"""The demo storefront on the search service: ``/shop/`` (InstantSearch widgets over the adapter in
``clients/instantsearch``), its session and its event relay.

* ``GET /shop/``: the page; its script ``/shop/assets/app.js`` is bundled by esbuild at ``make install``
  (never committed: a build product of ``clients/instantsearch``). Not built: a 503 page that says so.
  Its query string is the script's (the shop's state: ``?tenant=fashion&q=red+shirt&brand=Nike&page=2``)
  and whatever a link adds (``utm_source``): the server reads none of it, so the page is a plain route,
  outside the guard that refuses an API operation's undeclared query parameters.
* ``GET /shop/session?tenant=``: a read-only token for that tenant (:mod:`aisle.core.auth.storefront`),
  so the page works with auth on and never holds a token that can write.
* ``POST /shop/events?tenant=``: the page's clicks, carts and purchases (with the answer's
  ``attributionToken`` and the product's ``position``) checked here with the page's ``search:read``
  token, then relayed to the edit service's ``POST /events`` with a one-minute ``recs:write`` token of
  that tenant. Only those event types pass: a page token cannot write anything else.
* ``GET /shop/photos/{tenant}/{id}``: product photos from ``AISLE_PHOTOS_DIR``, public like a CDN's.

Search, suggestions, ``/images/search`` and ``/recommendations`` are this service's own routes, so the
page needs no CORS. ``AISLE_STOREFRONT=false`` answers 404 on every ``/shop`` path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import httpx
from fastapi import APIRouter, Depends, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from aisle.core.auth.errors import TenantForbidden
from aisle.core.auth.keys import SigningKeys
from aisle.core.auth.scopes import SEARCH_READ
from aisle.core.auth.storefront import StorefrontTokens
from aisle.core.config import Settings
from aisle.core.errors import ErrorCode, NotFound, TenantNotFound, Unavailable
from aisle.core.storage import BlobStore
from aisle.core.validation import is_resource_id
from aisle.services.common.auth import scoped
from aisle.services.common.errors import error_responses
from aisle.services.common.params import TenantQuery
from aisle.services.common.request_id import request_id_of
from aisle.services.search.shop_schemas import ShopEvents, ShopEventsAccepted, ShopSession
from aisle.services.search.state import State

ASSETS = Path(__file__).with_name("storefront")
ASSET_NAMES = {"app.js": "text/javascript", "app.js.map": "application/json", "style.css": "text/css"}
PHOTO_SUFFIXES = (".jpg", ".jpeg", ".png")
NOT_BUILT = (
    "<!doctype html><meta charset=utf-8><title>Aisle storefront</title><h1>The storefront is not built</h1>"
    "<p>Its script is bundled from <code>clients/instantsearch</code> by <code>make install</code> "
    "(Node.js and npm needed): run <code>make install</code>, then reload.</p>"
)


class Storefront:
    """The storefront's resources: the token signer and the edit service's client (``app.state.shop``)."""

    def __init__(self, tokens: StorefrontTokens, edit: httpx.AsyncClient) -> None:
        self.tokens = tokens
        self.edit = edit

    @classmethod
    def open(cls, settings: Settings, store: BlobStore) -> Storefront:
        """Signing with the key ring in ``store``; events relayed to ``settings.edit_url``."""
        tokens = StorefrontTokens(SigningKeys(store), settings.auth_url)
        return cls(tokens, httpx.AsyncClient(base_url=settings.edit_url, timeout=5.0))


async def _enabled(request: Request) -> Storefront:
    if not request.app.state.search.settings.storefront:
        raise NotFound("the storefront is off (AISLE_STOREFRONT=false)")
    shop: Storefront = request.app.state.shop
    return shop


Shop = Annotated[Storefront, Depends(_enabled)]
router = APIRouter(prefix="/shop")


def _check_tenant(state: State, tenant: str) -> None:
    if not state.engine.tenants.exists(tenant):
        raise TenantNotFound(tenant)


async def shop_root(request: Request) -> Response:
    """``/shop`` to ``/shop/``, the query string (the shop's state) kept."""
    await _enabled(request)
    query = f"?{request.url.query}" if request.url.query else ""
    return RedirectResponse(f"/shop/{query}", status_code=308)


async def shop_page(request: Request) -> Response:
    """The page (or a 503 page saying how to build its script)."""
    await _enabled(request)
    if not (ASSETS / "app.js").is_file():
        return HTMLResponse(NOT_BUILT, status_code=503, headers={"Retry-After": "60"})
    return FileResponse(ASSETS / "index.html", media_type="text/html", headers={"Cache-Control": "no-cache"})


# plain routes: the page's query string is its script's state, never an operation's parameters (above)
router.routes.append(Route("/shop", shop_root, methods=["GET"], include_in_schema=False))
router.routes.append(Route("/shop/", shop_page, methods=["GET"], include_in_schema=False))


@router.get("/assets/{name}", include_in_schema=False)
async def shop_asset(_: Shop, name: str) -> Response:
    if name not in ASSET_NAMES or not (ASSETS / name).is_file():
        raise NotFound(f"no storefront asset '{name}'")
    return FileResponse(ASSETS / name, media_type=ASSET_NAMES[name], headers={"Cache-Control": "no-cache"})


@router.get("/photos/{tenant}/{product_id}", include_in_schema=False)
async def shop_photo(state: State, _: Shop, tenant: str, product_id: str) -> Response:
    root = state.settings.photos_dir
    if root is not None and is_resource_id(product_id) and is_resource_id(tenant):
        for suffix in PHOTO_SUFFIXES:
            path = Path(root) / tenant / "images" / f"{product_id}{suffix}"
            if path.is_file():
                return FileResponse(path, headers={"Cache-Control": "public, max-age=86400"})
    raise NotFound(f"no photo of product '{product_id}'")


@router.get(
    "/session",
    response_model=ShopSession,
    responses=error_responses(403, 404, 422, 503),
    summary="A storefront page's read-only token for one tenant",
)
async def shop_session(state: State, shop: Shop, tenant: TenantQuery) -> ShopSession:
    """A token with ``search:read recs:read`` for ``tenant`` only, valid 15 minutes (null with auth off):
    what a shop page may hold, like a search-only API key. Only for a tenant that opened a storefront
    (``AISLE_STOREFRONT_TENANTS``): else 403 ``tenant_forbidden``; 404 ``tenant_not_found`` for an unknown
    tenant."""
    if state.settings.auth == "on" and not state.settings.storefront_open(tenant):
        # first, so a closed tenant's existence is not revealed either (AISLE_STOREFRONT_TENANTS)
        raise TenantForbidden(tenant)
    _check_tenant(state, tenant)
    if state.settings.auth != "on":
        return ShopSession(tenant=tenant, token=None, expiresIn=None, scopes=[])
    issued = shop.tokens.page_token(tenant)
    return ShopSession(
        tenant=tenant, token=issued.token, expiresIn=issued.expires_in, scopes=list(issued.scopes)
    )


@router.post(
    "/events",
    status_code=202,
    response_model=ShopEventsAccepted,
    dependencies=[scoped(SEARCH_READ)],
    responses=error_responses(400, 401, 403, 404, 422, 503),
    summary="A storefront page's shopper events, relayed to the edit service",
)
async def shop_events(
    state: State, shop: Shop, request: Request, tenant: TenantQuery, body: ShopEvents
) -> Response:
    """Clicks, add-to-carts and purchases (at most 50) of the page's shoppers, relayed to the edit
    service's ``POST /events`` (which stores them and passes them to analytics, a ``click`` or
    ``purchase`` with ``attributionToken`` and ``position`` counting for that answer). The edit service's
    status and body come back as they are; an unreachable edit service is a 503
    ``shop_events_unavailable``."""
    _check_tenant(state, tenant)
    headers = {"content-type": "application/json"}
    if (request_id := request_id_of(request.scope)) is not None:
        headers["x-request-id"] = request_id
    if state.settings.auth == "on":
        headers["authorization"] = f"Bearer {shop.tokens.relay_token(tenant)}"
    try:
        resp = await shop.edit.post(
            "/events",
            params={"tenant": tenant},
            content=body.model_dump_json(exclude_none=True),
            headers=headers,
        )
    except httpx.HTTPError as exc:
        raise Unavailable(
            f"the edit service is unreachable: {exc.__class__.__name__}",
            code=ErrorCode.SHOP_EVENTS_UNAVAILABLE,
        ) from exc
    relayed = {"Retry-After": v} if (v := resp.headers.get("Retry-After")) is not None else {}
    return Response(
        resp.content, status_code=resp.status_code, media_type="application/json", headers=relayed
    )
