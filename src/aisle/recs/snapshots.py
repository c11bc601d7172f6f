"""Training data as Parquet snapshots in the tenant's object storage, where Spark reads them.

``aisle train --engine spark`` trains from Parquet in the bucket: purchase lines and view events are
exported under ``datasets/<name>/part-00000.parquet`` in the tenant scope (a folder, as Spark writes
and reads data sets; a pipeline landing events there may add more ``part-*`` files), and the catalog
is already Parquet (``catalog/<version>/products.parquet``). No pyspark here: the services may import
this module.
"""

from __future__ import annotations

import io
from urllib.parse import urlparse

import polars as pl

from aisle.core.storage import BlobStore

DATASETS_DIR = "datasets"


def dataset_dir(name: str) -> str:
    """The folder (relative to the tenant scope) of snapshot ``name``."""
    return f"{DATASETS_DIR}/{name}"


def write_snapshot(scope: BlobStore, name: str, frame: pl.DataFrame) -> str:
    """Write ``frame`` as the one part of snapshot ``name`` (replacing it); returns its folder.

    Event logs keep their order in a ``seq`` column (Int64, 0..n-1), which the session model's
    trainers use to order events of one session sharing a timestamp.
    """
    if "session_id" in frame.columns and "seq" not in frame.columns:
        frame = frame.with_row_index("seq").with_columns(pl.col("seq").cast(pl.Int64))
    buf = io.BytesIO()
    frame.write_parquet(buf, compression="zstd")
    folder = dataset_dir(name)
    part = f"{folder}/part-00000.parquet"
    scope.put(part, buf.getvalue())
    for path in list(scope.list(folder + "/")):  # parts of an older export
        if path != part:
            scope.delete(path)
    return folder


def spark_uri(scope: BlobStore, storage_url: str, tenant: str, path: str) -> str:
    """Where Spark reads ``path`` of the tenant scope: a local path for a ``file://`` bucket, else
    ``s3a://BUCKET/PREFIX/<tenant>/<path>`` for an ``s3://`` one (the cluster needs the hadoop-aws
    jars and its ``spark.hadoop.fs.s3a.*`` settings; see docs/spark.md).

    Raises:
        ValueError: the storage URL is neither local nor S3.
    """
    local = scope.local_path(path)
    if local is not None:
        return local
    parsed = urlparse(storage_url)
    if parsed.scheme != "s3":
        raise ValueError(f"Spark cannot read storage URL '{storage_url}': use file:// or s3://")
    parts = [parsed.netloc, parsed.path.strip("/"), tenant, path.strip("/")]
    return "s3a://" + "/".join(p for p in parts if p)
