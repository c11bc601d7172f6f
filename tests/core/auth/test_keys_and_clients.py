"""The signing key ring (rotation, publication) and the client registry in object storage."""

from __future__ import annotations

import time

import pytest

from aisle.core.auth.clients import (
    ClientRecord,
    ClientRegistry,
    generate_client_key,
    load_private_key,
    load_public_key_pem,
    public_jwk,
)
from aisle.core.auth.keys import SigningKeys, published_jwks
from aisle.core.errors import BadRequest
from aisle.core.storage import BlobStore


def test_first_key_is_created_once_and_published(blob_store: BlobStore) -> None:
    keys = SigningKeys(blob_store, refresh=0)
    kid, _ = keys.active()
    assert keys.active()[0] == kid
    jwks = keys.jwks()
    assert [k["kid"] for k in jwks["keys"]] == [kid]
    assert jwks["keys"][0]["alg"] == "ES256" and "d" not in jwks["keys"][0]
    assert list(blob_store.list("_auth/keys")) == [f"_auth/keys/{kid}.json"]


def test_rotation_keeps_old_key_published_until_its_tokens_expire(blob_store: BlobStore) -> None:
    clock = [time.time()]
    keys = SigningKeys(blob_store, token_ttl=900, refresh=0, skew=30, clock=lambda: clock[0])
    old, _ = keys.active()
    new = keys.rotate()
    assert keys.active()[0] == new.kid
    now = clock[0]
    assert {k.kid for k in keys.published(now)} == {old, new.kid}
    assert {k.kid for k in keys.published(now + keys.grace + 1)} == {new.kid}
    assert {k["kid"] for k in published_jwks(blob_store)["keys"]} == {old, new.kid}
    assert {k["kid"] for k in published_jwks(blob_store, now + keys.grace + 1)["keys"]} == {new.kid}
    # a later rotation past the grace period deletes the expired key, private and public copies
    clock[0] = now + keys.grace + 1
    newest = keys.rotate()
    assert old not in {k.kid for k in keys.keys(fresh=True)}
    assert {k.kid for k in keys.published()} == {new.kid, newest.kid}
    assert not blob_store.exists(f"_auth/public/{old}.json") and not blob_store.exists(
        f"_auth/keys/{old}.json"
    )


def test_services_read_only_public_halves(blob_store: BlobStore) -> None:
    kid, _ = SigningKeys(blob_store).active()
    public = blob_store.get(f"_auth/public/{kid}.json")
    assert b'"d"' not in public
    blob_store.delete(f"_auth/keys/{kid}.json")  # a service without access to private keys
    assert [k["kid"] for k in published_jwks(blob_store)["keys"]] == [kid]


def test_client_registry_round_trip_and_listing(blob_store: BlobStore) -> None:
    registry = ClientRegistry(blob_store, ttl=0)
    key = generate_client_key("EdDSA")
    registry.put(
        ClientRecord(
            client_id="shop-1", tenants=["homedepot", "fashion"], scopes=["recs:read"], jwk=public_jwk(key)
        )
    )
    got = registry.get("shop-1")
    assert got is not None and got.tenants == ["fashion", "homedepot"] and got.alg == "EdDSA"
    assert blob_store.exists("_auth/clients/shop-1.json")
    assert [c.client_id for c in registry.list()] == ["shop-1"]
    assert registry.get("nobody") is None and registry.get("../x") is None
    registry.delete("shop-1")
    assert registry.get("shop-1") is None


@pytest.mark.parametrize(
    "field,value",
    [
        ("tenants", ["_auth"]),  # the auth prefix can never be a tenant
        ("tenants", []),
        ("scopes", ["superuser"]),
        ("client_id", "a/b"),
    ],
)
def test_client_record_validation(field: str, value: object) -> None:
    data = {"client_id": "c", "tenants": ["fashion"], "scopes": ["search:read"]}
    data[field] = value
    with pytest.raises((BadRequest, ValueError)):
        ClientRecord(**data, jwk=public_jwk(generate_client_key()))  # type: ignore[arg-type]


def test_client_record_refuses_private_or_unsupported_keys() -> None:
    private = generate_client_key("ES256").as_dict(private=True)
    with pytest.raises(ValueError):
        ClientRecord(client_id="c", tenants=["fashion"], scopes=["search:read"], jwk=private)
    with pytest.raises(ValueError):
        ClientRecord(
            client_id="c", tenants=["fashion"], scopes=["search:read"], jwk={"kty": "oct", "k": "AAAA"}
        )


def test_pem_round_trip_for_every_algorithm() -> None:
    for alg in ("ES256", "RS256", "EdDSA"):
        key = generate_client_key(alg)
        pem = key.as_pem(private=True)
        assert public_jwk(load_private_key(pem)) == public_jwk(key)
        assert load_public_key_pem(key.as_pem(private=False)) == public_jwk(key)
        with pytest.raises(BadRequest):
            load_private_key(key.as_pem(private=False))
    with pytest.raises(BadRequest):
        load_public_key_pem(b"not a key")


def test_corrupt_client_record_is_refused_not_a_crash(blob_store: BlobStore) -> None:
    blob_store.put("_auth/clients/broken.json", b'{"client_id": "broken", "tenants": []}')
    blob_store.put("_auth/clients/garbage.json", b"not json")
    registry = ClientRegistry(blob_store, ttl=0)
    assert registry.get("broken") is None and registry.get("garbage") is None
    assert registry.list() == []
