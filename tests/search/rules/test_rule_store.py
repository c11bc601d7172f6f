"""Rules in object storage: versions, optimistic concurrency, and search processes seeing changes."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from aisle.core.storage import BlobStore
from aisle.core.tenancy import tenant_scope
from aisle.search.rules.book import RuleBooks
from aisle.search.rules.model import RuleBody
from aisle.search.rules.store import RuleExists, RuleNotFound, RuleStore, RuleVersionConflict


def body(name: str = "r", **fields: object) -> RuleBody:
    return RuleBody.model_validate(
        {"name": name, "actions": [{"type": "hide", "productIds": ["p1"]}], **fields}
    )


@pytest.fixture
def rules(blob_store: BlobStore) -> RuleStore:
    return RuleStore(tenant_scope(blob_store, "shop"))


def test_create_replace_delete_with_versions(rules: RuleStore) -> None:
    rule = rules.create(body("first"), "promo")
    assert (rule.id, rule.version) == ("promo", 1)
    with pytest.raises(RuleExists):
        rules.create(body("again"), "promo")
    replaced = rules.replace("promo", body("second"), version=1)
    assert replaced.version == 2 and replaced.createdAt == rule.createdAt
    assert rules.get("promo").name == "second"
    with pytest.raises(RuleVersionConflict) as err:
        rules.replace("promo", body("stale"), version=1)
    assert err.value.status == 409 and err.value.details["currentVersion"] == 2
    assert rules.get("promo").name == "second"  # the stale write changed nothing
    with pytest.raises(RuleVersionConflict):
        rules.delete("promo", version=1)
    rules.delete("promo", version=2)
    with pytest.raises(RuleNotFound):
        rules.get("promo")
    # a re-created id continues the versions, so a client holding version 1 or 2 cannot overwrite it
    assert rules.create(body("third"), "promo").version == 4


def test_list_orders_by_priority_then_id(rules: RuleStore) -> None:
    rules.create(body(priority=1), "b")
    rules.create(body(priority=1), "a")
    rules.create(body(priority=7), "c")
    rules.create(body(), "gone")
    rules.delete("gone")
    assert [r.id for r in rules.list()] == ["c", "a", "b"]
    assert len(rules.create(body()).id) == 12  # a random id when none is given


def test_twenty_concurrent_writers_lose_no_update(rules: RuleStore) -> None:
    rules.create(body("start"), "hot")
    barrier = threading.Barrier(20)

    def writer(n: int) -> int | None:
        current = rules.get("hot").version
        barrier.wait()
        try:
            return rules.replace("hot", body(f"w{n}"), version=current).version
        except RuleVersionConflict:
            return None

    with ThreadPoolExecutor(20) as pool:
        results = list(pool.map(writer, range(20)))
    landed = [v for v in results if v is not None]
    assert landed == [2]  # all read version 1: exactly one lands, 19 get 409
    assert rules.get("hot").version == 2


def test_a_search_process_sees_a_change_on_its_next_call(blob_store: BlobStore) -> None:
    books = RuleBooks(blob_store)
    rules = RuleStore(tenant_scope(blob_store, "shop"))
    assert len(books.book("shop")) == 0
    rules.create(body(), "r1")
    assert [r.id for r in books.book("shop").rules] == ["r1"]
    same = books.book("shop")
    assert books.book("shop") is same  # unchanged: the cached book
    rules.replace("r1", body(enabled=False), version=1)
    assert len(books.book("shop")) == 0  # disabled rules are not in the book
    for n in range(5):  # quick successive writes are all seen
        rules.create(body(), f"n{n}")
        assert len(books.book("shop")) == n + 1
