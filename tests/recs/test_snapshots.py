"""Training snapshots: Parquet under the tenant's ``datasets/`` and where Spark reads them."""

from __future__ import annotations

import io

import polars as pl
import pytest

from aisle.core.storage import BlobStore
from aisle.core.tenancy import tenant_scope
from aisle.recs.snapshots import spark_uri, write_snapshot


def test_snapshot_replaces_its_parts_and_keeps_the_log_order(any_blob_store: BlobStore) -> None:
    scope = tenant_scope(any_blob_store, "shop")
    events = pl.DataFrame({"session_id": ["b", "a", "b"], "item_id": ["1", "2", "3"], "ts": [5.0, 5.0, 5.0]})
    scope.put("datasets/views/part-00001.parquet", b"stale part of an older export")
    folder = write_snapshot(scope, "views", events)
    assert folder == "datasets/views"
    assert sorted(scope.list("datasets/views/")) == ["datasets/views/part-00000.parquet"]
    back = pl.read_parquet(io.BytesIO(scope.get("datasets/views/part-00000.parquet")))
    assert back["seq"].to_list() == [0, 1, 2]
    assert back.drop("seq").equals(events)


def test_spark_reads_a_local_bucket_by_path_and_s3_through_s3a(blob_store: BlobStore) -> None:
    scope = tenant_scope(blob_store, "shop")
    local = spark_uri(scope, "file:///ignored", "shop", "datasets/views")
    assert local == scope.local_path("datasets/views") and local.endswith("/shop/datasets/views")

    class Remote:  # the S3 backend has no local path; only that is asked of it
        def local_path(self, path: str) -> None:
            return None

    remote = Remote()
    assert spark_uri(remote, "s3://bkt/pre/fix", "shop", "datasets/views") == (  # type: ignore[arg-type]
        "s3a://bkt/pre/fix/shop/datasets/views"
    )
    assert spark_uri(remote, "s3://bkt", "shop", "/x/") == "s3a://bkt/shop/x"  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="file:// or s3://"):
        spark_uri(remote, "gs://bkt", "shop", "x")  # type: ignore[arg-type]
