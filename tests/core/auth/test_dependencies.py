"""The Authorizer dependency over real HTTP (TestClient): every refused token, scope and tenant.

(No ``from __future__ import annotations``: FastAPI must resolve the route annotations built inside
:func:`build_app`.)

Tests named ``test_attack_*`` are attacks; each must be refused with the RFC 6750 status, error code and
``WWW-Authenticate`` challenge, and the route must not run.
"""

import logging
import time
from collections.abc import Iterator
from typing import Annotated, Any

import pytest
from fastapi import Depends, FastAPI, Request
from fastapi.testclient import TestClient
from tests.support.auth import AuthKit

from aisle.core.auth.clients import generate_client_key
from aisle.core.auth.dependencies import Authorizer, Principal
from aisle.core.storage import BlobStore
from aisle.services.common.errors import install_error_handlers

A, B = "fashion", "homedepot"


def build_app(authorizer: Authorizer, calls: list[str]) -> FastAPI:
    """A stand-in service: reads with the tenant in query or body, and a write that records its call."""
    app = FastAPI()
    install_error_handlers(app)
    read = Annotated[Principal | None, Depends(authorizer.require("search:read"))]

    @app.post("/search")
    async def search(body: dict[str, Any], principal: read) -> dict[str, Any]:
        calls.append("search")
        return {"client": principal.client_id if principal else None, "body": body}

    @app.get("/items")
    def items(tenant: str, principal: read) -> dict[str, Any]:
        calls.append("items")
        return {"tenant": tenant}

    @app.get("/suggestions")
    def suggestions(
        principal: Annotated[Any, Depends(authorizer.require("search:read", tenant_default=A))],
    ) -> list:
        calls.append("suggestions")
        return []

    @app.post("/images/search")
    async def images(request: Request, principal: read) -> dict[str, Any]:
        form = await request.form()
        calls.append("images")
        return {"fields": sorted(form.keys())}

    @app.post("/containers")
    def create_container(
        tenant: str,
        body: dict[str, Any],
        principal: Annotated[Any, Depends(authorizer.require("recs:write"))],
    ) -> dict[str, str]:
        calls.append("write")
        return {"ok": tenant}

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    return app


@pytest.fixture
def kit(blob_store: BlobStore) -> AuthKit:
    return AuthKit(blob_store)


@pytest.fixture
def calls() -> list[str]:
    return []


@pytest.fixture
def client(kit: AuthKit, calls: list[str]) -> Iterator[TestClient]:
    with TestClient(build_app(Authorizer(kit.settings(), kit.store), calls)) as c:
        yield c


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def refused(response: Any, status: int, code: str, calls: list[str]) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert response.headers["www-authenticate"].startswith('Bearer realm="aisle"')
    if code not in ("unauthorized", "tenant_forbidden"):
        assert (
            f'error="{"insufficient_scope" if status == 403 else code}"'
            in response.headers["www-authenticate"]
        )
    assert calls == [], "the route ran"


def test_valid_token_reaches_route_and_body_is_still_readable(
    kit: AuthKit, client: TestClient, calls: list
) -> None:
    token = kit.token([A])
    r = client.post("/search", json={"tenant": A, "query": "red shirt"}, headers=bearer(token))
    assert r.status_code == 200 and r.json() == {
        "client": "test-client",
        "body": {"tenant": A, "query": "red shirt"},
    }
    assert client.get(f"/items?tenant={A}", headers=bearer(token)).status_code == 200
    assert client.get("/suggestions", headers=bearer(token)).status_code == 200  # tenant_default
    files = {"file": ("x.jpg", b"\xff\xd8jpeg", "image/jpeg")}
    r = client.post(f"/images/search?tenant={A}", files=files, data={"k": "v"}, headers=bearer(token))
    assert r.status_code == 200 and r.json() == {"fields": ["file", "k"]}
    assert calls == ["search", "items", "suggestions", "images"]


def test_health_needs_no_token(client: TestClient) -> None:
    assert client.get("/health").status_code == 200


def test_attack_missing_token(client: TestClient, calls: list) -> None:
    r = client.post("/search", json={"tenant": A, "query": "q"})
    refused(r, 401, "unauthorized", calls)
    assert r.headers["www-authenticate"] == 'Bearer realm="aisle"'  # RFC 6750 3.1: no error code


def test_attack_other_scheme(client: TestClient, calls: list) -> None:
    refused(
        client.get(f"/items?tenant={A}", headers={"Authorization": "Basic dXNlcjpwYXNz"}),
        401,
        "unauthorized",
        calls,
    )


@pytest.mark.parametrize(
    "token",
    ["", "abc", "a.b.c", "a.b", "....", "eyJhbGciOiJFUzI1NiJ9.e30.", "é.é.é", "x" * 9000, "eyJ9.eyJ9.eyJ9"],
    ids=[
        "empty",
        "one-part",
        "garbage-parts",
        "two-parts",
        "dots",
        "no-kid",
        "non-ascii",
        "oversized",
        "bad-json",
    ],
)
def test_attack_malformed_or_oversized_token(token: str, client: TestClient, calls: list) -> None:
    r = client.get(f"/items?tenant={A}", headers={"Authorization": f"Bearer {token}".encode()})  # type: ignore[dict-item]
    assert r.status_code == 401, r.text
    assert r.json()["error"]["code"] in ("invalid_token", "unauthorized")
    assert calls == []


def test_attack_forged_signature(kit: AuthKit, client: TestClient, calls: list) -> None:
    token = kit.token([A])
    head, body, sig = token.split(".")
    flipped = sig[:-4] + ("AAAA" if sig[-4:] != "AAAA" else "BBBB")
    refused(
        client.get(f"/items?tenant={A}", headers=bearer(f"{head}.{body}.{flipped}")),
        401,
        "invalid_token",
        calls,
    )


def test_attack_signed_by_attacker_key_with_real_kid(kit: AuthKit, client: TestClient, calls: list) -> None:
    token = kit.forge(kit.claims([A]), key=generate_client_key("ES256"))
    refused(client.get(f"/items?tenant={A}", headers=bearer(token)), 401, "invalid_token", calls)


def test_attack_tampered_claims_keep_old_signature(kit: AuthKit, client: TestClient, calls: list) -> None:
    head, _, sig = kit.token([A]).split(".")
    body = kit.unsigned(kit.claims([A, B]), {}).split(".")[1]
    refused(
        client.get(f"/items?tenant={B}", headers=bearer(f"{head}.{body}.{sig}")), 401, "invalid_token", calls
    )


def test_attack_expired(kit: AuthKit, client: TestClient, calls: list) -> None:
    token = kit.token([A], ttl=60, now=int(time.time()) - 3600)
    refused(client.get(f"/items?tenant={A}", headers=bearer(token)), 401, "invalid_token", calls)


@pytest.mark.parametrize("claim", ["nbf", "iat"])
def test_attack_not_yet_valid(claim: str, kit: AuthKit, client: TestClient, calls: list) -> None:
    claims = kit.claims([A])
    claims[claim] = int(time.time()) + 300
    refused(client.get(f"/items?tenant={A}", headers=bearer(kit.forge(claims))), 401, "invalid_token", calls)


@pytest.mark.parametrize("aud", ["other-service", ["x", "y"], None])
def test_attack_wrong_audience(aud: Any, kit: AuthKit, client: TestClient, calls: list) -> None:
    claims = kit.claims([A])
    claims["aud"] = aud
    refused(client.get(f"/items?tenant={A}", headers=bearer(kit.forge(claims))), 401, "invalid_token", calls)


def test_attack_wrong_issuer(kit: AuthKit, client: TestClient, calls: list) -> None:
    claims = kit.claims([A])
    claims["iss"] = "https://evil.example"
    refused(client.get(f"/items?tenant={A}", headers=bearer(kit.forge(claims))), 401, "invalid_token", calls)


def test_attack_alg_none(kit: AuthKit, client: TestClient, calls: list) -> None:
    kid, _ = kit.keys.active()
    token = kit.unsigned(kit.claims([A]), {"alg": "none", "kid": kid, "typ": "at+jwt"})
    refused(client.get(f"/items?tenant={A}", headers=bearer(token)), 401, "invalid_token", calls)


def test_attack_hmac_confusion_with_public_key(kit: AuthKit, client: TestClient, calls: list) -> None:
    kid, _ = kit.keys.active()
    token = kit.hmac_signed(kit.claims([A]), {"alg": "HS256", "kid": kid, "typ": "at+jwt"}, kit.public_pem())
    refused(client.get(f"/items?tenant={A}", headers=bearer(token)), 401, "invalid_token", calls)


def test_attack_unknown_kid(kit: AuthKit, client: TestClient, calls: list) -> None:
    token = kit.forge(kit.claims([A]), header={"kid": "not-a-key"}, key=generate_client_key("ES256"))
    refused(client.get(f"/items?tenant={A}", headers=bearer(token)), 401, "invalid_token", calls)


def test_attack_client_assertion_used_as_access_token(kit: AuthKit, client: TestClient, calls: list) -> None:
    key = kit.add_client("c1", [A])
    refused(
        client.get(f"/items?tenant={A}", headers=bearer(kit.assertion("c1", key))),
        401,
        "invalid_token",
        calls,
    )


def test_attack_tenant_a_token_on_tenant_b_query(kit: AuthKit, client: TestClient, calls: list) -> None:
    refused(client.get(f"/items?tenant={B}", headers=bearer(kit.token([A]))), 403, "tenant_forbidden", calls)


def test_attack_tenant_a_token_on_tenant_b_body(kit: AuthKit, client: TestClient, calls: list) -> None:
    r = client.post("/search", json={"tenant": B, "query": "q"}, headers=bearer(kit.token([A])))
    refused(r, 403, "tenant_forbidden", calls)


def test_attack_body_tenant_without_content_type(kit: AuthKit, client: TestClient, calls: list) -> None:
    # FastAPI parses a body without Content-Type as JSON, so the Authorizer must too.
    headers = {**bearer(kit.token([A])), "Content-Type": ""}
    r = client.post("/search", content=b'{"tenant": "homedepot", "query": "q"}', headers=headers)
    assert r.status_code in (403, 422) and calls == []


def test_attack_allowed_query_tenant_with_other_body_tenant(
    kit: AuthKit, client: TestClient, calls: list
) -> None:
    r = client.post(f"/search?tenant={A}", json={"tenant": B, "query": "q"}, headers=bearer(kit.token([A])))
    refused(r, 403, "tenant_forbidden", calls)


def test_attack_repeated_tenant_parameter(kit: AuthKit, client: TestClient, calls: list) -> None:
    r = client.get(f"/items?tenant={A}&tenant={B}", headers=bearer(kit.token([A])))
    refused(r, 403, "tenant_forbidden", calls)


def test_attack_non_string_body_tenant(kit: AuthKit, client: TestClient, calls: list) -> None:
    r = client.post("/search", json={"tenant": [A, B], "query": "q"}, headers=bearer(kit.token([A])))
    refused(r, 403, "tenant_forbidden", calls)


def test_attack_tenant_default_not_granted(kit: AuthKit, client: TestClient, calls: list) -> None:
    refused(client.get("/suggestions", headers=bearer(kit.token([B]))), 403, "tenant_forbidden", calls)


def test_attack_form_tenant_b(kit: AuthKit, client: TestClient, calls: list) -> None:
    r = client.post(f"/images/search?tenant={A}", data={"tenant": B}, headers=bearer(kit.token([A])))
    refused(r, 403, "tenant_forbidden", calls)


def test_attack_missing_scope(kit: AuthKit, client: TestClient, calls: list) -> None:
    token = kit.token([A], scopes=["search:read"])
    r = client.post(f"/containers?tenant={A}", json={"id": "c"}, headers=bearer(token))
    refused(r, 403, "insufficient_scope", calls)
    assert 'scope="recs:write"' in r.headers["www-authenticate"]


def test_tokens_are_cached_after_first_verification(kit: AuthKit, blob_store: BlobStore, calls: list) -> None:
    authorizer = Authorizer(kit.settings(), blob_store)
    with TestClient(build_app(authorizer, calls)) as c:
        token = kit.token([A])
        assert c.get(f"/items?tenant={A}", headers=bearer(token)).status_code == 200
        assert authorizer.verifier.cached(token) is not None
        assert authorizer.verifier.cached(token, now=time.time() + 3600) is None  # expired: dropped


def test_rotated_key_is_fetched_on_unknown_kid(kit: AuthKit, calls: list[str]) -> None:
    now = [1000.0]
    authorizer = Authorizer(kit.settings(), kit.store, clock=lambda: now[0])
    with TestClient(build_app(authorizer, calls)) as client:
        old = kit.token([A])
        assert client.get(f"/items?tenant={A}", headers=bearer(old)).status_code == 200
        kit.keys.rotate()
        new = kit.token([A])
        now[0] += 1.0  # within the 2 s between two fetches for an unknown kid: not fetched yet
        assert client.get(f"/items?tenant={A}", headers=bearer(new)).status_code == 401
        now[0] += 1.5  # past it: the unknown kid makes the cache read the keys again
        assert client.get(f"/items?tenant={A}", headers=bearer(new)).status_code == 200
        assert client.get(f"/items?tenant={A}", headers=bearer(old)).status_code == 200


def test_auth_off_passes_everything_and_warns(
    blob_store: BlobStore, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[str] = []
    with caplog.at_level(logging.WARNING, logger="aisle.auth"):
        authorizer = Authorizer(AuthKit(blob_store).settings(auth="off"))
    assert "AISLE_AUTH=off: requests are not authenticated" in caplog.text
    with TestClient(build_app(authorizer, calls)) as c:
        r = c.post("/search", json={"tenant": B, "query": "q"})
        assert r.status_code == 200 and r.json()["client"] is None


def test_unknown_scope_is_a_programming_error(kit: AuthKit) -> None:
    with pytest.raises(ValueError):
        Authorizer(kit.settings(), kit.store).require("superuser")


def test_attack_tenant_b_in_a_get_body(kit: AuthKit, client: TestClient, calls: list) -> None:
    r = client.request("GET", f"/items?tenant={A}", json={"tenant": B}, headers=bearer(kit.token([A])))
    refused(r, 403, "tenant_forbidden", calls)


def test_attack_http2_body_without_length(kit: AuthKit, calls: list) -> None:
    """HTTP/2 frames a body without Content-Length or Transfer-Encoding: the tenant in it is still read."""
    import asyncio

    app = build_app(Authorizer(kit.settings(), kit.store), calls)
    body = b'{"tenant": "%s", "query": "q"}' % B.encode()
    token = kit.token([A])
    scope = {
        "type": "http",
        "http_version": "2",
        "method": "POST",
        "path": "/search",
        "raw_path": b"/search",
        "root_path": "",
        "scheme": "http",
        "query_string": b"",
        "headers": [(b"authorization", f"Bearer {token}".encode()), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    sent: list[dict[str, Any]] = []
    messages = iter([{"type": "http.request", "body": body, "more_body": False}])

    async def receive() -> dict[str, Any]:
        return next(messages, {"type": "http.disconnect"})

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    assert sent and sent[0]["status"] == 403
    assert calls == [], "the route ran"
