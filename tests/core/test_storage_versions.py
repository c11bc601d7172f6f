"""Taking the next version of an immutable artifact: each writer its own number, even when racing."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from aisle.core.errors import Conflict
from aisle.core.storage import BlobStore, open_blob_store
from aisle.core.storage.versions import ATTEMPTS, claim_version, versions


@pytest.fixture
def store(tmp_path: Path) -> BlobStore:
    return open_blob_store(f"file://{tmp_path / 'bucket'}")


def test_versions_count_up_from_the_highest_present(store: BlobStore) -> None:
    assert versions(store, "art") == []
    assert claim_version(store, "art", "a.bin", b"1") == 1
    store.put("art/v7/a.bin", b"left by an older writer")
    store.put("art/notes/x", b"not a version")
    assert claim_version(store, "art", "a.bin", b"2") == 8
    assert versions(store, "art") == [1, 7, 8]
    assert store.get("art/v1/a.bin") == b"1"  # never rewritten


def test_racing_writers_each_get_their_own_version(store: BlobStore) -> None:
    with ThreadPoolExecutor(8) as pool:
        taken = list(pool.map(lambda i: claim_version(store, "art", "a.bin", str(i).encode()), range(16)))
    assert sorted(taken) == list(range(1, 17))
    assert {store.get(f"art/v{v}/a.bin") for v in taken} == {str(i).encode() for i in range(16)}


class _AlwaysTaken:
    """A bucket where every create finds the object there already (another writer always first)."""

    def __init__(self, inner: BlobStore) -> None:
        self.inner = inner
        self.tries = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def put_if_absent(self, path: str, data: bytes) -> bool:
        self.tries += 1
        return False


def test_giving_up_is_a_conflict_not_a_loop(store: BlobStore) -> None:
    taken = _AlwaysTaken(store)
    with pytest.raises(Conflict) as err:
        claim_version(taken, "art", "a.bin", b"x")  # type: ignore[arg-type]
    assert err.value.code == "model_artifact_exists" and taken.tries == ATTEMPTS
