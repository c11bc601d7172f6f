"""A compacted catalog version is swapped in when writes settle (or the written rows pile up), not in
the middle of a write stream: the open index serves every write already, and building and catching up
a version costs seconds of CPU per worker (issue 41)."""

from __future__ import annotations

from pathlib import Path

from tests.support.product_shop import TENANT, shop
from tests.support.waiting import wait_until

from aisle.catalog.compaction import compact
from aisle.catalog.writer import CatalogWriter
from aisle.core.storage import open_blob_store
from aisle.search.indexes import IndexRegistry


def _setup(tmp_path: Path, **waits: float) -> tuple[IndexRegistry, CatalogWriter]:
    tenants = shop(open_blob_store(f"file://{tmp_path / 'bucket'}"), tmp_path)
    registry = IndexRegistry(
        tenants, tmp_path / "data", check_every=0, live_dirs=[tmp_path / "live"], background=True, **waits
    )
    return registry, CatalogWriter(tenants)


def test_a_new_version_waits_while_writes_go_on_and_is_served_once_they_settle(tmp_path: Path) -> None:
    registry, writer = _setup(tmp_path, settle_s=3600, tail_rows=1000)
    first = registry.get(TENANT).version
    writer.patch(TENANT, "1", {"price": 5})
    assert registry.follow(TENANT) == 1
    folded = compact(writer.tenants, TENANT)
    assert folded is not None
    served = registry.get(TENANT)
    assert served.version == first and served.sequence == 1  # the open index, with the write
    assert not list((tmp_path / "data" / "indexes" / TENANT).glob(f"{folded.version}-*"))  # not built

    registry.settle_s = 0.0  # the writes settled
    wait_until(lambda: registry.get(TENANT).version == folded.version, "the compacted version is served")
    now = registry.get(TENANT)
    assert now.sequence == 1 and now.rows[now.ord_by_id["1"]]["price"] == 5
    registry.close()


def test_a_new_version_is_served_during_writes_once_the_written_rows_pile_up(tmp_path: Path) -> None:
    registry, writer = _setup(tmp_path, settle_s=3600, tail_rows=2)
    registry.get(TENANT)
    writer.patch(TENANT, "1", {"price": 5})
    writer.patch(TENANT, "3", {"price": 6})
    assert registry.follow(TENANT) == 2
    folded = compact(writer.tenants, TENANT)
    assert folded is not None
    wait_until(lambda: registry.get(TENANT).version == folded.version, "the compacted version is served")
    registry.close()
