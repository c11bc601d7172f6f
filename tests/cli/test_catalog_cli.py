"""``aisle catalog import`` as a client of the product API's import (one change-log write, then folded
into a catalog version and indexed) and ``aisle catalog compact`` after API writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.product_shop import TENANT, shop
from typer.testing import CliRunner

from aisle.catalog.changes import ChangeLog
from aisle.catalog.store import CatalogStore
from aisle.catalog.writer import CatalogWriter
from aisle.cli import app, register_commands
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants

register_commands()
runner = CliRunner()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "AISLE_STORAGE_URL": f"file://{tmp_path / 'bucket'}",
        "AISLE_DATA_DIR": str(tmp_path / "data"),
        "AISLE_REDIS_URL": "",
    }


def test_import_goes_through_the_log_and_compact_folds_api_writes(
    tmp_path: Path, env: dict[str, str]
) -> None:
    tenants = shop(open_blob_store(env["AISLE_STORAGE_URL"]), tmp_path)
    source = tmp_path / "new.jsonl"
    source.write_text('{"sku": "1", "name": "Red Shoe v2", "cost": 40}\n{"sku": "7", "cost": "x"}\n')
    result = runner.invoke(app, ["catalog", "import", TENANT, str(source), "--no-index"], env=env)
    assert result.exit_code == 0, result.output
    assert "imported 1 products (2 deleted, 0 stale, 1 bad rows skipped) as change 1" in result.stdout
    store = CatalogStore(tenants.scope(TENANT))
    pointer = store.pointer()
    assert pointer is not None and pointer.sequence == 1
    assert store.load().products.to_dicts() == [
        {"id": "1", "title": "Red Shoe v2", "brand": None, "price": 40.0, "stock": None, "active": None}
    ]

    CatalogWriter(Tenants(open_blob_store(env["AISLE_STORAGE_URL"]), ttl=0)).upsert(
        TENANT, "8", {"title": "Hat"}
    )
    compacted = runner.invoke(app, ["catalog", "compact", TENANT], env=env)
    assert compacted.exit_code == 0 and "changes up to 2 folded" in compacted.stdout, compacted.output
    assert sorted(store.load().products["id"].to_list()) == ["1", "8"]
    assert runner.invoke(app, ["catalog", "compact", TENANT], env=env).stdout.endswith("nothing to compact\n")
    assert ChangeLog(tenants.scope(TENANT)).sequence() == [2]
