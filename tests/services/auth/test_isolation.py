"""Tenant isolation across every service app: each endpoint is attacked and must refuse.

Every service package under ``aisle.services`` is attacked (one that cannot be imported fails the test:
it is never dropped). Every route except the open ones (``/health``, docs) must carry an
``Authorizer.require(...)`` dependency, and on every such route, with auth on:

* no token: 401;
* a token for tenant A (all scopes), issued by the token service itself (``POST /token`` with a client
  of tenant A), naming tenant B in the query: 403 ``tenant_forbidden``;
* the same naming B in a JSON body (alone, and next to an allowed query tenant), or in the path
  (``/tenants/{tenant}``): 403 ``tenant_forbidden``;
* a token for both tenants holding every scope but the route's: 403 ``insufficient_scope``;
* a token signed by another key: 401.

The token service itself has no tenant-scoped operation (only the RFC 7523 grant and the JWKS, open
by design); a test holds it to that, so a tenant-scoped route added there is attacked too.

"Nothing read or written" is checked three ways: the route never runs (the dependency refuses first),
object storage sees no access outside ``_auth/`` (a spy wraps the service's store), and storage and the
data directory are byte-for-byte unchanged afterwards. A token for tenant B then passes authentication
(any status but 401/403), so the refusals come from isolation, not from a broken route.
"""

from __future__ import annotations

import hashlib
import importlib
import pkgutil
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from tests.support.auth import AuthKit

import aisle.services
from aisle.core.auth.assertion import JWT_BEARER
from aisle.core.auth.clients import generate_client_key
from aisle.core.auth.scopes import SCOPES
from aisle.core.storage import BlobStore, open_blob_store

KNOWN_SERVICES = ("search", "predict", "edit", "rules", "vectors", "proxy", "analytics")


SERVICES = list(KNOWN_SERVICES)
TOKEN_SERVICE = "auth"
TOKEN_ROUTES = {"/token", "/.well-known/jwks.json"}
OPEN_PATHS = {"/health", "/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json"}
STOREFRONT = {"/shop", "/shop/", "/shop/assets/{name}", "/shop/photos/{tenant}/{product_id}", "/shop/session"}
"""The storefront's public page, bundle and photos, and its page-token route: no token can guard them (a
shop page is public); /shop/session gives a token only for tenants that opened a storefront
(``test_the_storefront_session_refuses_tenants_that_did_not_open_one``)."""
CONSOLE = ("/", "/console")
"""The merchandising console's pages (rules service): no API of their own, they call the API with the
signed-in token's scopes (tests/services/rules/test_console_auth_http.py and the browser tests)."""
A, B = "fashion", "homedepot"
BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


class SpyBlobStore:
    """A BlobStore that records every path touched, to prove refused requests read nothing."""

    def __init__(self, inner: BlobStore) -> None:
        self.inner = inner
        self.touched: list[str] = []

    def _note(self, path: str) -> None:
        self.touched.append(path)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def recorded(*args: Any, **kwargs: Any) -> Any:
            self._note(str(args[0]) if args else str(kwargs.get("prefix", kwargs.get("path", ""))))
            return attr(*args, **kwargs)

        return recorded

    def foreign(self) -> list[str]:
        """Paths touched outside the auth prefix (the Authorizer may read its keys there)."""
        return [p for p in self.touched if not p.startswith("_auth")]


def snapshot(*roots: Path) -> dict[str, str]:
    """Each file's digest; SQLite's ``-shm`` files are left out: a WAL database's shared-memory index
    changes when a background reader (the analytics service's outbox drain) merely looks, and holds no
    data of its own (https://sqlite.org/walformat.html)."""
    out = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.name.endswith("-shm"):
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def route_scopes(route: APIRoute) -> set[str]:
    """Scopes named by ``Authorizer.require`` dependencies anywhere in the route's dependency tree."""
    found: set[str] = set()
    stack = list(route.dependant.dependencies)
    while stack:
        dep = stack.pop()
        scope = getattr(dep.call, "scope", None)
        if isinstance(scope, str):
            found.add(scope)
        stack.extend(dep.dependencies)
    return found


def endpoints(routes: list[Any], prefix: str = "", inherited: frozenset[str] = frozenset()) -> list[Any]:
    """``(path, scopes, route)`` of every APIRoute, looking inside included routers (FastAPI keeps them
    as ``_IncludedRouter`` entries with their own prefix and dependencies)."""
    out: list[Any] = []
    for route in routes:
        original = getattr(route, "original_router", None)
        if original is not None:
            context = route.include_context
            extra = {getattr(d.dependency, "scope", None) for d in context.dependencies} - {None}
            out += endpoints(original.routes, prefix + context.prefix, inherited | frozenset(extra))
        elif isinstance(route, APIRoute):
            out.append((prefix + route.path, set(inherited) | route_scopes(route), route))
    return out


def concrete_path(path: str, tenant: str = A) -> str:
    """``path`` with ``tenant`` for a ``{tenant}`` parameter (``PUT /tenants/{tenant}``), ``x`` for others."""
    return re.sub(r"\{[^}]+\}", "x", path.replace("{tenant}", tenant))


def load_factory(name: str) -> Callable[..., FastAPI]:
    return importlib.import_module(f"aisle.services.{name}.app").create_app  # type: ignore[no-any-return]


@pytest.fixture
def service(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    name = request.param
    factory = load_factory(name)
    module = importlib.import_module(f"aisle.services.{name}.app")
    bucket, data = tmp_path / "bucket", tmp_path / "data"
    data.mkdir()
    store = open_blob_store(f"file://{bucket}")
    spy = SpyBlobStore(store)
    if hasattr(module, "open_blob_store_from_settings"):
        monkeypatch.setattr(module, "open_blob_store_from_settings", lambda _settings: spy)
    kit = AuthKit(store, auth_url="http://127.0.0.1:8086")
    kit.keys.active()  # the token service's key exists before the services start
    settings = kit.settings(storage_url=f"file://{bucket}", data_dir=data, redis_url=None)
    token_a = issued_token(kit, settings, [A])
    app = factory(settings)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield name, app, client, kit, token_a, spy, (bucket, data)


def issued_token(kit: AuthKit, settings: Any, tenants: list[str]) -> str:
    """An access token for ``tenants`` (every scope) from the token service's own ``POST /token``."""
    from aisle.services.auth.app import create_app as token_service

    key = kit.add_client("isolation-client", tenants)
    with TestClient(token_service(settings, store=kit.store)) as tokens:
        answer = tokens.post(
            "/token", data={"grant_type": JWT_BEARER, "assertion": kit.assertion("isolation-client", key)}
        )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["access_token"])


def attack(client: TestClient, method: str, path: str, token: str | None, query: str, body: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    kwargs: dict[str, Any] = {"headers": headers}
    if body is not None:
        kwargs["json"] = body
    return client.request(method, f"{path}{query}", **kwargs)


def code_of(response: Any) -> str | None:
    try:
        error = response.json().get("error")
    except ValueError:
        return None
    return error.get("code") if isinstance(error, dict) else None


@pytest.mark.parametrize("service", SERVICES, indirect=True)
def test_attack_every_endpoint_refuses_other_tenants_and_missing_scopes(service: Any) -> None:
    name, app, client, kit, token_a, spy, roots = service
    routes = [
        e
        for e in endpoints(app.routes)
        if e[0] not in OPEN_PATHS | STOREFRONT and e[0] != CONSOLE[0] and not e[0].startswith(CONSOLE[1])
    ]
    assert routes, f"{name}: no endpoints found"
    unprotected = [f"{sorted(r.methods)} {path}" for path, scopes, r in routes if not scopes]
    assert not unprotected, f"{name}: endpoints without an Authorizer.require dependency: {unprotected}"

    before = snapshot(*roots)
    spy.touched.clear()
    forged = kit.forge(kit.claims([A, B]), key=generate_client_key("ES256"))
    failures: list[str] = []
    attempts = 0
    for route_path, needed, route in routes:
        path = concrete_path(route_path)
        others = [s for s in SCOPES if s not in needed]
        lacking = kit.token([A, B], scopes=others) if others else None
        for method in sorted(route.methods):
            has_body = method in BODY_METHODS
            cases: list[tuple[str, str | None, str, Any, tuple[int, ...], str | None]] = [
                ("no token", None, f"?tenant={A}", {"tenant": A} if has_body else None, (401,), None),
                (
                    "forged signature",
                    forged,
                    f"?tenant={A}",
                    {"tenant": A} if has_body else None,
                    (401,),
                    None,
                ),
                ("tenant B in query", token_a, f"?tenant={B}", None, (403,), "tenant_forbidden"),
            ]
            if has_body:
                cases += [
                    ("tenant B in body", token_a, "", {"tenant": B}, (403,), "tenant_forbidden"),
                    (
                        "A in query, B in body",
                        token_a,
                        f"?tenant={A}",
                        {"tenant": B},
                        (403,),
                        "tenant_forbidden",
                    ),
                ]
            if "{tenant}" in route_path:  # the path names a tenant: the token's must include it
                body = {"tenant": A} if has_body else None
                cases.append(("tenant B in path", token_a, f"?tenant={A}", body, (403,), "tenant_forbidden"))
            if lacking is not None:
                body = {"tenant": A} if has_body else None
                cases.append(("missing scope", lacking, f"?tenant={A}", body, (403,), "insufficient_scope"))
            for label, token, query, body, statuses, code in cases:
                attempts += 1
                target = concrete_path(route_path, B) if label == "tenant B in path" else path
                r = attack(client, method, target, token, query, body)
                if r.status_code not in statuses or (code and code_of(r) != code):
                    failures.append(f"{method} {route_path} [{label}]: {r.status_code} {r.text[:120]}")
                elif r.status_code == 401 and "www-authenticate" not in r.headers:
                    failures.append(f"{method} {route_path} [{label}]: 401 without WWW-Authenticate")

    assert not failures, f"{name}: {len(failures)} of {attempts} attacks not refused:\n" + "\n".join(failures)
    assert spy.foreign() == [], f"{name}: refused requests touched storage: {spy.foreign()[:5]}"
    assert snapshot(*roots) == before, f"{name}: refused requests changed storage or the data directory"
    print(f"\nisolation {name}: {attempts} attacks on {len(routes)} endpoints, all refused")

    # Control: the right token passes authentication on every endpoint (whatever the route then says).
    token_b = kit.token([B])
    for route_path, _, route in routes:
        for method in sorted(route.methods):
            body = {"tenant": B} if method in BODY_METHODS else None
            r = attack(client, method, concrete_path(route_path, B), token_b, f"?tenant={B}", body)
            assert r.status_code not in (401, 403), (
                f"{name} {method} {route_path}: {r.status_code} {r.text[:200]}"
            )


def test_every_service_package_is_attacked() -> None:
    """A new service is attacked as soon as it exists: the list above is every service package."""
    packages = {m.name for m in pkgutil.iter_modules(aisle.services.__path__) if m.ispkg} - {"common"}
    assert packages == {*SERVICES, TOKEN_SERVICE}


def test_the_token_service_has_no_tenant_scoped_operation(tmp_path: Path) -> None:
    """Its only routes are the grant and the public keys, which no token can guard (RFC 7523, 7517)."""
    from aisle.services.auth.app import create_app as token_service

    store = open_blob_store(f"file://{tmp_path / 'bucket'}")
    kit = AuthKit(store, auth_url="http://127.0.0.1:8086")
    app = token_service(
        kit.settings(storage_url=f"file://{tmp_path / 'bucket'}", redis_url=None), store=store
    )
    paths = {path for path, _scopes, _route in endpoints(app.routes)} - OPEN_PATHS
    assert paths == TOKEN_ROUTES


@pytest.mark.parametrize("service", ["search"], indirect=True)
def test_the_storefront_session_refuses_tenants_that_did_not_open_one(service: Any) -> None:
    """With no AISLE_STOREFRONT_TENANTS, no tenant's page token is handed out: 403, before any read."""
    _, _, client, _, _, spy, _ = service
    spy.touched.clear()
    for tenant in (A, B):
        r = client.get("/shop/session", params={"tenant": tenant})
        assert (r.status_code, code_of(r)) == (403, "tenant_forbidden"), r.text
        assert "token" not in r.json()
    assert spy.touched == []
