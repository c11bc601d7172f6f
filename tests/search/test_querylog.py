"""The query log: parsing plain and CSV logs, aggregation, storage in the tenant scope."""

from __future__ import annotations

from pathlib import Path

import pytest

from aisle.catalog.datasets.common import tenant_files
from aisle.core.errors import TenantNotFound
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import Attribute, AttributeConfiguration, GlobalConfiguration
from aisle.search.querylog import (
    LOG_DATA,
    QueryLogStore,
    import_query_log,
    import_query_log_file,
    parse_query_log,
)


def test_plain_log_counts_repeats_after_normalising(tmp_path: Path) -> None:
    path = tmp_path / "log.txt"
    path.write_text('Drill Bits\ndrill  bits\n\n1/2" pvc\n1/2 in. PVC\ncafé\n', encoding="utf-8")
    keys, spellings, lines, skipped = parse_query_log(path)
    assert keys == {"drill bits": 2, "1/2 in pvc": 2, "cafe": 1}
    assert lines == 6 and skipped == 1  # the blank line
    assert spellings[("drill bits", "Drill Bits")] == 1


def test_csv_log_with_header_and_counts(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text('query,count\nnike shoes,10\n"2,000 psi washer",3\nNike Shoes,5\nbad,row,x\n')
    keys, spellings, _, skipped = parse_query_log(path)
    assert keys == {"nike shoes": 15, "2 000 psi washer": 3}
    assert skipped == 1
    assert max((c, q) for (k, q), c in spellings.items() if k == "nike shoes")[1] == "nike shoes"


def test_single_column_csv_with_a_header(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text("query\nhammer\nHammer\n")
    assert parse_query_log(path)[0] == {"hammer": 2}


def _tenant(store: BlobStore, name: str = "shop") -> Tenants:
    tenants = Tenants(store, ttl=0)
    attrs = AttributeConfiguration(attributes=[Attribute(name="title", type="text", role="title")])
    tenants.write_config(name, tenant_files(attrs, GlobalConfiguration()))
    return tenants


def test_import_replaces_or_appends_and_bumps_the_version(blob_store: BlobStore, tmp_path: Path) -> None:
    tenants = _tenant(blob_store)
    path = tmp_path / "log.txt"
    path.write_text("hammer\nhammer\nsaw\n")
    store = QueryLogStore(tenants.scope("shop"))
    assert store.current_version() is None and store.load().height == 0
    assert import_query_log(tenants, "shop", path) == 2
    first = store.current_version()
    assert blob_store.exists(f"shop/{LOG_DATA}")
    assert dict(store.load().select("key", "count").iter_rows()) == {"hammer": 2, "saw": 1}
    summary = import_query_log_file(tenants, "shop", path, append=True)
    assert summary.queries == 2 and summary.searches == 6
    assert dict(store.load().select("key", "count").iter_rows()) == {"hammer": 4, "saw": 2}
    assert store.current_version() != first


def test_import_into_an_unknown_tenant_fails(blob_store: BlobStore, tmp_path: Path) -> None:
    path = tmp_path / "log.txt"
    path.write_text("hammer\n")
    with pytest.raises(TenantNotFound):
        import_query_log(Tenants(blob_store), "nobody", path)
