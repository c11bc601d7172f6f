"""The revision log (containers and rules) on the local backend and a real S3-compatible server (moto)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from aisle.core.storage import BlobStore, PrefixBlobStore
from aisle.core.storage.revisions import RevisionLog
from aisle.search.rules.book import RuleBooks
from aisle.search.rules.model import RuleBody
from aisle.search.rules.store import RuleStore


@pytest.fixture
def store(any_blob_store: BlobStore) -> BlobStore:
    return any_blob_store


def test_revisions_tombstones_and_a_lagging_hint(store: BlobStore) -> None:
    log = RevisionLog(PrefixBlobStore(store, "shop"), "docs")
    assert log.latest("a") == (0, None)
    assert log.write("a", 1, {"n": 1}) and not log.write("a", 1, {"n": "late"})
    assert log.write("a", 2, {"n": 2})
    store.put("shop/docs/a/head.json", b'{"revision": 1}')  # a hint left behind by a slow writer
    assert RevisionLog(PrefixBlobStore(store, "shop"), "docs").latest("a") == (2, {"n": 2})
    assert log.write("a", 3, None)
    assert log.latest("a") == (3, None) and log.names() == ["a"]


def test_concurrent_writers_of_one_revision_exactly_one_wins(store: BlobStore) -> None:
    log = RevisionLog(PrefixBlobStore(store, "shop"), "docs")
    barrier = threading.Barrier(10)

    def write(n: int) -> bool:
        barrier.wait()
        return log.write("hot", 1, {"n": n})

    with ThreadPoolExecutor(10) as pool:
        assert sum(pool.map(write, range(10))) == 1


def test_a_search_process_sees_rule_changes_on_either_backend(store: BlobStore) -> None:
    books = RuleBooks(store)
    rules = RuleStore(PrefixBlobStore(store, "shop"))
    assert len(books.book("shop")) == 0
    body = RuleBody.model_validate({"name": "r", "actions": [{"type": "redirect", "url": "/x"}]})
    rules.create(body, "r1")
    assert [r.id for r in books.book("shop").rules] == ["r1"]
    rules.delete("r1")
    assert len(books.book("shop")) == 0
