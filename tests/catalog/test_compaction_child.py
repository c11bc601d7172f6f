"""Compaction folded in a child process (:mod:`aisle.catalog.compaction_child`), as the search service's
compactor runs it: the same version as in process, a lease held elsewhere reported as 409, a folded
version readable by the parent."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.product_shop import TENANT, shop

from aisle.catalog.compaction import Compactor, Lease
from aisle.catalog.compaction_child import fold_in_child
from aisle.catalog.store import CatalogStore
from aisle.catalog.writer import CatalogWriter
from aisle.core.errors import AisleError
from aisle.core.storage import open_blob_store


def test_the_child_folds_the_log_and_says_when_the_lease_is_held(tmp_path: Path) -> None:
    url = f"file://{tmp_path / 'bucket'}"
    tenants = shop(open_blob_store(url), tmp_path)
    writer = CatalogWriter(tenants)
    writer.patch(TENANT, "1", {"price": 5})
    writer.delete(TENANT, "2")
    fold = fold_in_child(url)

    lease = Lease(tenants.scope(TENANT), "another process")
    held = lease.acquire()
    assert held is not None
    with pytest.raises(AisleError) as caught:
        fold(TENANT)
    assert caught.value.status == 409 and caught.value.code == "catalog_compacting"
    lease.release(held)

    compactor = Compactor(tenants, every=3600, fold=fold)
    compactor.wake(TENANT)
    [done] = compactor.run_once()
    assert (done.sequence, done.products) == (2, 2)
    store = CatalogStore(tenants.scope(TENANT))
    assert store.current_version() == done.version
    products = store.load(done.version).products
    assert sorted(products["id"].to_list()) == ["1", "3"]
    assert products.filter(products["id"] == "1")["price"].to_list() == [5.0]
    assert compactor.run_once() == []  # nothing new to fold
