"""One BlobStore contract, run against the local backend and a real S3-compatible server (moto)."""

from __future__ import annotations

import pytest

from aisle.core.errors import BadRequest
from aisle.core.storage import BlobNotFound, BlobStore, PrefixBlobStore, open_blob_store


@pytest.fixture
def store(any_blob_store: BlobStore) -> BlobStore:
    return any_blob_store


def test_put_get_round_trip(store: BlobStore) -> None:
    store.put("fashion/catalog/current.json", b'{"version": "v1"}')
    assert store.get("fashion/catalog/current.json") == b'{"version": "v1"}'
    assert store.exists("fashion/catalog/current.json")


def test_missing_object_raises_not_found(store: BlobStore) -> None:
    with pytest.raises(BlobNotFound):
        store.get("nope/missing.json")
    assert not store.exists("nope/missing.json")


def test_put_if_absent_creates_once(store: BlobStore) -> None:
    assert store.put_if_absent("a/lock", b"first")
    assert not store.put_if_absent("a/lock", b"second")
    assert store.get("a/lock") == b"first"


def test_list_and_list_dirs(store: BlobStore) -> None:
    for path in ["t1/a.json", "t1/sub/b.json", "t2/c.json"]:
        store.put(path, b"x")
    assert sorted(store.list("t1")) == ["t1/a.json", "t1/sub/b.json"]
    assert store.list_dirs("") == ["t1", "t2"]
    assert store.list_dirs("t1") == ["sub"]
    assert list(store.list("absent")) == []


def test_delete_is_idempotent(store: BlobStore) -> None:
    store.put("d/x", b"1")
    store.delete("d/x")
    store.delete("d/x")
    assert not store.exists("d/x")


def test_prefix_store_scopes_every_path(store: BlobStore) -> None:
    scoped = PrefixBlobStore(store, "fashion")
    scoped.put("rules/r1.json", b"{}")
    assert store.get("fashion/rules/r1.json") == b"{}"
    assert list(scoped.list("rules")) == ["rules/r1.json"]
    assert not PrefixBlobStore(store, "homedepot").exists("rules/r1.json")


def test_unknown_scheme_is_rejected() -> None:
    with pytest.raises(BadRequest) as err:
        open_blob_store("ftp://example/bucket")
    assert err.value.code == "storage_url_invalid"
