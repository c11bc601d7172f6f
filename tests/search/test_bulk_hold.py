"""A large import is served by the next catalog version's index, built once, instead of every worker
applying it product by product; a small one is applied; a hold that outlives its timeout applies the
bulk (aisle.search.bulk_hold, issue 41)."""

from __future__ import annotations

from pathlib import Path

from tests.support.product_shop import TENANT, shop
from tests.support.waiting import wait_until

from aisle.catalog.store import CatalogStore
from aisle.catalog.writer import CatalogWriter
from aisle.core.storage import open_blob_store
from aisle.search.bulk_hold import BulkHolds
from aisle.search.indexes import IndexRegistry

FILE = b"sku,name,cost\n" + b"".join(b"%d,Imported Lamp %d,%d\n" % (i, i, i + 1) for i in range(1, 9))


def _setup(tmp_path: Path, holds: float, *, timeout_s: float = 120) -> tuple[IndexRegistry, CatalogWriter]:
    tenants = shop(open_blob_store(f"file://{tmp_path / 'bucket'}"), tmp_path)
    registry = IndexRegistry(
        tenants,
        tmp_path / "data",
        check_every=0,
        live_dirs=[tmp_path / "live"],
        background=True,
        settle_s=3600,  # no version would be built for plain writes: only a hold builds one
        tail_rows=10**6,
        holds=BulkHolds(tenants, holds, min_rows=4, timeout_s=timeout_s),
    )
    return registry, CatalogWriter(tenants)


def _titles(registry: IndexRegistry) -> set[str]:
    index = registry.get(TENANT)
    return {str(index.rows[index.ord_by_id[pid]]["title"]) for pid in index.ord_by_id}


def test_a_large_import_is_served_by_the_next_versions_index(tmp_path: Path) -> None:
    registry, writer = _setup(tmp_path, holds=0.25)
    first = registry.get(TENANT).version
    writer.patch(TENANT, "1", {"price": 5})  # before the bulk: applied as ever
    outcome = writer.import_data(TENANT, FILE, "csv")
    writer.patch(TENANT, "2", {"price": 7})  # after it: waits with it
    assert registry.follow(TENANT) == 1  # 8 rows >= 25% of 3 products: held, the patch before applied
    assert registry.follow(TENANT) == 1 and TENANT in registry.holds  # nothing read meanwhile
    wait_until(lambda: registry.get(TENANT).version != first, "the compacted version is served")
    pointer = CatalogStore(writer.tenants.scope(TENANT)).pointer()
    assert pointer is not None and pointer.sequence >= outcome.sequence  # compacted by the hold
    wait_until(lambda: registry.follow(TENANT) == 3, "the write after the bulk is served")
    assert TENANT not in registry.holds
    index = registry.get(TENANT)
    assert "Imported Lamp 8" in _titles(registry) and index.rows[index.ord_by_id["2"]]["price"] == 7
    assert index.rows[index.ord_by_id["1"]]["title"] == "Imported Lamp 1"
    registry.close()


def test_a_small_import_is_applied_and_a_timed_out_hold_applies_the_bulk(tmp_path: Path) -> None:
    registry, writer = _setup(tmp_path, holds=5.0)  # a bulk must hold 5x the catalog: never here
    first = registry.get(TENANT).version
    writer.import_data(TENANT, FILE, "csv")
    assert registry.follow(TENANT) == 1 and TENANT not in registry.holds
    assert registry.get(TENANT).version == first and "Imported Lamp 8" in _titles(registry)
    registry.close()

    held, writer = _setup(tmp_path / "timeout", holds=0.25, timeout_s=0)
    first = held.get(TENANT).version
    writer.import_data(TENANT, FILE, "csv")
    assert held.follow(TENANT) == 0  # held, and timed out at once: the next round applies it
    assert held.follow(TENANT) == 1 and "Imported Lamp 8" in _titles(held)
    held.close()
