"""POST /token (RFC 7523 JWT bearer grant), the JWKS and the open endpoints, over real HTTP (TestClient).

Tests named ``test_attack_*`` are refused grants: each must answer the RFC 6749 section 5.2 error form
(``{"error", "error_description"}``, ``Cache-Control: no-store``) with the right code and issue no token.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.support.auth import AuthKit, free_port

from aisle.core.auth.assertion import JWT_BEARER
from aisle.core.auth.clients import generate_client_key
from aisle.core.auth.jwks import parse_jwks
from aisle.core.auth.replay_redis import RedisJtiStore
from aisle.core.auth.tokens import TokenVerifier, read_header
from aisle.services.auth.app import create_app

TOKEN_URL = "http://testserver/token"


def grant(client: TestClient, assertion: str | None, **extra: str) -> Any:
    form = {"grant_type": JWT_BEARER, **extra}
    if assertion is not None:
        form["assertion"] = assertion
    return client.post("/token", data=form)


def oauth_error(response: Any, error: str, status: int = 400) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error", "error_description"} and body["error"] == error, body
    assert response.headers["cache-control"] == "no-store"
    assert "access_token" not in response.text


@pytest.mark.parametrize("alg", ["ES256", "RS256", "EdDSA"])
def test_grant_issues_a_token_the_services_accept(alg: str, kit: AuthKit, token_client: TestClient) -> None:
    key = kit.add_client("shop", ["fashion"], ["search:read", "recs:read"], alg=alg)
    r = grant(token_client, kit.assertion("shop", key))
    assert r.status_code == 200, r.text
    assert r.headers["cache-control"] == "no-store" and r.headers["pragma"] == "no-cache"
    body = r.json()
    assert (
        body["token_type"] == "Bearer"
        and body["expires_in"] == 900
        and body["scope"] == "search:read recs:read"
    )
    jwks = token_client.get("/.well-known/jwks.json").json()["keys"]
    key_by_kid = parse_jwks({"keys": jwks})
    principal = TokenVerifier("http://testserver").verify(
        body["access_token"], key_by_kid[read_header(body["access_token"])["kid"]]
    )
    assert principal.client_id == "shop" and principal.tenants == {"fashion"}
    assert principal.scopes == {"search:read", "recs:read"}


def test_scope_parameter_narrows_the_token(kit: AuthKit, token_client: TestClient) -> None:
    key = kit.add_client("shop", ["fashion"], ["search:read", "recs:read"])
    r = grant(token_client, kit.assertion("shop", key), scope="recs:read")
    assert r.status_code == 200 and r.json()["scope"] == "recs:read"


def test_open_endpoints(token_client: TestClient) -> None:
    assert token_client.get("/health").json()["status"] == "ok"
    assert token_client.get("/docs").status_code == 200
    paths = token_client.get("/openapi.json").json()["paths"]
    assert {"/token", "/.well-known/jwks.json", "/health"} <= set(paths)
    keys = token_client.get("/.well-known/jwks.json").json()["keys"]
    assert len(keys) == 1 and keys[0]["alg"] == "ES256" and "d" not in keys[0]


def test_rotation_publishes_old_and_new_keys(kit: AuthKit, token_client: TestClient) -> None:
    key = kit.add_client("shop", ["fashion"])
    old_token = grant(token_client, kit.assertion("shop", key)).json()["access_token"]
    before = {k["kid"] for k in token_client.get("/.well-known/jwks.json").json()["keys"]}
    new = kit.keys.rotate()  # what `aisle auth rotate-keys` does
    with TestClient(create_app(kit.settings(), store=kit.store)) as fresh:
        new_token = grant(fresh, kit.assertion("shop", key)).json()["access_token"]
        published = {k["kid"]: k for k in fresh.get("/.well-known/jwks.json").json()["keys"]}
    assert set(published) == before | {new.kid}
    keys = parse_jwks({"keys": list(published.values())})
    verifier = TokenVerifier("http://testserver")
    assert read_header(new_token)["kid"] == new.kid
    for token in (old_token, new_token):
        assert verifier.verify(token, keys[read_header(token)["kid"]]).client_id == "shop"


def test_attack_forged_signature(kit: AuthKit, token_client: TestClient) -> None:
    kit.add_client("shop", ["fashion"])
    oauth_error(grant(token_client, kit.assertion("shop", generate_client_key("ES256"))), "invalid_grant")


def test_attack_tampered_assertion_claims(kit: AuthKit, token_client: TestClient) -> None:
    key = kit.add_client("shop", ["fashion"])
    head, _, sig = kit.assertion("shop", key).split(".")
    body = kit.unsigned({"iss": "shop", "sub": "shop", "aud": TOKEN_URL, "exp": int(time.time()) + 60}, {})
    oauth_error(grant(token_client, f"{head}.{body.split('.')[1]}.{sig}"), "invalid_grant")


def test_attack_expired_assertion(kit: AuthKit, token_client: TestClient) -> None:
    key = kit.add_client("shop", ["fashion"])
    oauth_error(grant(token_client, kit.assertion("shop", key, now=int(time.time()) - 900)), "invalid_grant")


@pytest.mark.parametrize("claim", ["nbf", "iat"])
def test_attack_not_yet_valid_assertion(claim: str, kit: AuthKit, token_client: TestClient) -> None:
    key = kit.add_client("shop", ["fashion"])
    future = int(time.time()) + 600
    oauth_error(grant(token_client, kit.assertion("shop", key, claims={claim: future})), "invalid_grant")


@pytest.mark.parametrize("aud", ["http://evil.example/token", ["http://other/token"], None])
def test_attack_wrong_audience(aud: Any, kit: AuthKit, token_client: TestClient) -> None:
    key = kit.add_client("shop", ["fashion"])
    oauth_error(grant(token_client, kit.assertion("shop", key, claims={"aud": aud})), "invalid_grant")


def test_attack_replayed_jti(kit: AuthKit, token_client: TestClient) -> None:
    key = kit.add_client("shop", ["fashion"])
    assertion = kit.assertion("shop", key)
    assert grant(token_client, assertion).status_code == 200
    oauth_error(grant(token_client, assertion), "invalid_grant")
    # a fresh assertion reusing a jti is a replay too
    first = kit.assertion("shop", key, jti="dup-1")
    assert grant(token_client, first).status_code == 200
    oauth_error(grant(token_client, kit.assertion("shop", key, jti="dup-1", lifetime=200)), "invalid_grant")


def test_attack_replayed_jti_across_instances_with_redis(kit: AuthKit, redis_url: str) -> None:
    """Two token-service replicas sharing Redis: an assertion used on one is refused by the other."""
    prefix = f"test:jti:{secrets.token_hex(4)}:"
    key = kit.add_client("shop", ["fashion"])
    assertion = kit.assertion("shop", key)
    apps = [
        create_app(
            kit.settings(), store=kit.store, jti_store=RedisJtiStore.from_url(redis_url, prefix=prefix)
        )
        for _ in range(2)
    ]
    with TestClient(apps[0]) as one, TestClient(apps[1]) as two:
        assert grant(one, assertion).status_code == 200
        oauth_error(grant(two, assertion), "invalid_grant")


def test_attack_missing_jti(kit: AuthKit, token_client: TestClient) -> None:
    key = kit.add_client("shop", ["fashion"])
    oauth_error(grant(token_client, kit.assertion("shop", key, claims={"jti": None})), "invalid_grant")


def test_unknown_client_wrong_key_and_wrong_alg_get_one_answer(
    kit: AuthKit, token_client: TestClient
) -> None:
    """A caller without the key learns neither which client ids exist nor what they sign with."""
    kit.add_client("shop", ["fashion"], alg="ES256")
    answers = [
        grant(token_client, kit.assertion("nobody", generate_client_key("ES256"))),
        grant(token_client, kit.assertion("shop", generate_client_key("ES256"))),
        grant(token_client, kit.assertion("shop", generate_client_key("RS256"))),
    ]
    for answer in answers:
        oauth_error(answer, "invalid_grant")
    assert len({(a.status_code, a.text) for a in answers}) == 1


def test_attack_disabled_client(kit: AuthKit, token_client: TestClient) -> None:
    key = kit.add_client("shop", ["fashion"])
    record = kit.clients.get("shop")
    assert record is not None
    kit.clients.put(record.model_copy(update={"disabled": True}))
    refused = grant(token_client, kit.assertion("shop", key))
    oauth_error(refused, "invalid_grant")
    unknown = grant(token_client, kit.assertion("nobody", generate_client_key("ES256")))
    assert refused.text == unknown.text


def test_attack_alg_none(kit: AuthKit, token_client: TestClient) -> None:
    kit.add_client("shop", ["fashion"])
    now = int(time.time())
    claims = {"iss": "shop", "sub": "shop", "aud": TOKEN_URL, "exp": now + 60, "jti": "n1"}
    for alg in ("none", "None", "NONE"):
        oauth_error(grant(token_client, kit.unsigned(claims, {"alg": alg})), "invalid_grant")


def test_attack_hmac_confusion_with_client_public_key(kit: AuthKit, token_client: TestClient) -> None:
    key = kit.add_client("shop", ["fashion"], alg="RS256")
    now = int(time.time())
    claims = {"iss": "shop", "sub": "shop", "aud": TOKEN_URL, "exp": now + 60, "jti": "h1"}
    secret = key.as_pem(private=False)
    oauth_error(grant(token_client, kit.hmac_signed(claims, {"alg": "HS256"}, secret)), "invalid_grant")


def test_attack_algorithm_other_than_the_clients_key(kit: AuthKit, token_client: TestClient) -> None:
    kit.add_client("shop", ["fashion"], alg="ES256")
    oauth_error(grant(token_client, kit.assertion("shop", generate_client_key("RS256"))), "invalid_grant")


def test_attack_exp_more_than_an_hour_ahead(kit: AuthKit, token_client: TestClient) -> None:
    key = kit.add_client("shop", ["fashion"])
    oauth_error(grant(token_client, kit.assertion("shop", key, lifetime=2 * 3600)), "invalid_grant")


def test_attack_missing_exp(kit: AuthKit, token_client: TestClient) -> None:
    key = kit.add_client("shop", ["fashion"])
    oauth_error(grant(token_client, kit.assertion("shop", key, claims={"exp": None})), "invalid_grant")


def test_attack_sub_is_not_the_client(kit: AuthKit, token_client: TestClient) -> None:
    key = kit.add_client("shop", ["fashion"])
    oauth_error(grant(token_client, kit.assertion("shop", key, claims={"sub": "admin"})), "invalid_grant")


def test_attack_wrong_grant_type(kit: AuthKit, token_client: TestClient) -> None:
    key = kit.add_client("shop", ["fashion"])
    for grant_type in ("client_credentials", "password", "urn:ietf:params:oauth:grant-type:saml2-bearer"):
        r = token_client.post(
            "/token", data={"grant_type": grant_type, "assertion": kit.assertion("shop", key)}
        )
        oauth_error(r, "unsupported_grant_type")


def test_attack_missing_grant_type_or_assertion(token_client: TestClient) -> None:
    oauth_error(token_client.post("/token", data={"assertion": "x.y.z"}), "invalid_request")
    oauth_error(grant(token_client, None), "invalid_request")
    oauth_error(
        token_client.post("/token", json={"grant_type": JWT_BEARER, "assertion": "x"}), "invalid_request"
    )


@pytest.mark.parametrize(
    "assertion",
    ["garbage", "a.b.c", "eyJhbGciOiJFUzI1NiJ9..", "....", "é"],
    ids=["word", "abc", "empty", "dots", "utf8"],
)
def test_attack_malformed_assertion(assertion: str, token_client: TestClient) -> None:
    oauth_error(grant(token_client, assertion), "invalid_grant")


def test_attack_oversized_assertion_or_request(kit: AuthKit, token_client: TestClient) -> None:
    key = kit.add_client("shop", ["fashion"])
    padded = kit.assertion("shop", key, claims={"pad": "x" * 9000})
    oauth_error(grant(token_client, padded), "invalid_grant")
    oauth_error(grant(token_client, "x", pad="y" * 20_000), "invalid_request")


def test_attack_scope_beyond_the_client(kit: AuthKit, token_client: TestClient) -> None:
    key = kit.add_client("shop", ["fashion"], ["search:read"])
    oauth_error(
        grant(token_client, kit.assertion("shop", key), scope="search:read catalog:write"), "invalid_scope"
    )


def test_attack_parameter_given_twice(kit: AuthKit, token_client: TestClient) -> None:
    """RFC 6749 section 3.2: no parameter may be repeated (a second assertion must not slip past)."""
    key = kit.add_client("shop", ["fashion"])
    body = f"grant_type={JWT_BEARER}&assertion={kit.assertion('shop', key)}&assertion=x.y.z"
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    oauth_error(token_client.post("/token", content=body, headers=headers), "invalid_request")


def test_attack_not_form_encoded(kit: AuthKit, token_client: TestClient) -> None:
    key = kit.add_client("shop", ["fashion"])
    files = {"assertion": (None, kit.assertion("shop", key)), "grant_type": (None, JWT_BEARER)}
    oauth_error(token_client.post("/token", files=files), "invalid_request")  # multipart
    oauth_error(
        token_client.post(
            "/token", content=b"\xff\xfe", headers={"Content-Type": "application/x-www-form-urlencoded"}
        ),
        "invalid_request",
    )


def test_replay_store_down_fails_closed_with_503(kit: AuthKit) -> None:
    key = kit.add_client("shop", ["fashion"])
    down = RedisJtiStore.from_url(f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
    with TestClient(create_app(kit.settings(), store=kit.store, jti_store=down)) as client:
        r = grant(client, kit.assertion("shop", key))
        oauth_error(r, "temporarily_unavailable", status=503)
        assert int(r.headers["Retry-After"]) >= 1
