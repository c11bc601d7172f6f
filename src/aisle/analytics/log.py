"""The analytics log in object storage: immutable Parquet files per tenant, table and day.

Layout (Hive-style date partitions, so Spark and DuckDB read it as it is; the paths are named in
:mod:`aisle.core.analytics_layout`)::

    <tenant>/analytics/<table>/date=YYYY-MM-DD/<writer>-<seq>.parquet

``table`` is ``answers`` or ``outcomes`` (:data:`aisle.analytics.records.TABLES`). Each file is one
flushed batch of one process (``writer`` names the process, ``seq`` counts its batches), written with
one atomic ``put``: a reader sees a whole file or none. Files are never rewritten, so a local copy of a
file is valid for ever; retention deletes whole day partitions.
"""

from __future__ import annotations

import io
import os
import re
import secrets
import socket
import threading
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pyarrow as pa

from aisle.analytics.records import TABLES, Record
from aisle.core import analytics_layout as layout
from aisle.core.storage import BlobStore

DERIVED = [layout.ROLLUPS]
"""Tables computed from the log (:mod:`aisle.analytics.rollups`), expired with it."""
_DAY = re.compile(r"^date=(\d{4}-\d{2}-\d{2})$")


def day_of(at: float) -> date:
    """The UTC calendar day of a Unix time (seconds)."""
    return datetime.fromtimestamp(at, UTC).date()


_POLARS: dict[str, pl.DataType] = {
    "string": pl.Utf8(),
    "double": pl.Float64(),
    "int64": pl.Int64(),
    "list<item: string>": pl.List(pl.Utf8()),
}


def polars_schema(schema: pa.Schema) -> dict[str, pl.DataType]:
    """The polars types of a record schema. Files are written with polars, not pyarrow: building a
    pyarrow table imports pandas (about 40 MiB in every recording process), polars does not."""
    return {name: _POLARS[str(schema.field(name).type)] for name in schema.names}


class ParquetLog:
    """Writes batches of records to the bucket and lists, fetches and expires them.

    Args:
        store: the bucket (the whole store, not a tenant's view: records name their tenant).
        cache_dir: where files of a remote bucket are copied to be read (a local bucket is read in place).
        writer: this process's name in file names (default: host, pid and a random suffix, so two
            processes, or a restarted one, never write the same name). Files are created, never
            replaced: a writer given a name an earlier one used skips the sequence numbers it took.
    """

    def __init__(self, store: BlobStore, cache_dir: Path, writer: str | None = None) -> None:
        self.store = store
        self.cache_dir = cache_dir
        self.writer = writer or f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"
        self._seq = 0
        self._lock = threading.Lock()

    def write(self, records: Sequence[Record]) -> list[str]:
        """Write ``records`` as one file per (tenant, table, day). Returns the paths written.

        Raises:
            StorageUnavailable: the bucket did not take a file (the records not yet written are the
                caller's to keep or drop; files already written stay: each is whole).
        """
        groups: dict[tuple[str, str, date], list[dict[str, object]]] = defaultdict(list)
        for record in records:
            table, _ = TABLES[type(record)]
            groups[(record.tenant, table, day_of(record.at))].append(record.row())
        written = []
        for (tenant, table, day), rows in sorted(groups.items()):
            schema = next(s for t, s in TABLES.values() if t == table)
            buf = io.BytesIO()
            pl.DataFrame(rows, schema=polars_schema(schema), orient="row").write_parquet(
                buf, compression="zstd"
            )
            data = buf.getvalue()
            while True:  # a name taken by an earlier writer of the same name is skipped, never rewritten
                with self._lock:
                    self._seq += 1
                    seq = self._seq
                path = layout.log_file(tenant, table, day, self.writer, seq)
                if self.store.put_if_absent(path, data):
                    break
            written.append(path)
        return written

    def warm(self) -> None:
        """Write each table, empty, to memory: the first Parquet write of a process initialises the
        writer and its codec (tenths of a second, holding the GIL), which a service pays at start-up
        rather than in the middle of its traffic."""
        for _, schema in TABLES.values():
            pl.DataFrame(schema=polars_schema(schema)).write_parquet(io.BytesIO(), compression="zstd")

    def days(self, tenant: str, table: str) -> list[date]:
        """The days that have files of ``table``, oldest first (a local bucket may keep the folder of
        an expired day: only folders holding a file count)."""
        found = []
        for name in self.store.list_dirs(layout.table_dir(tenant, table)):
            if (m := _DAY.match(name.rstrip("/").rsplit("/", 1)[-1])) is not None:
                day = date.fromisoformat(m.group(1))
                if next(iter(self.store.list(layout.partition(tenant, table, day))), None) is not None:
                    found.append(day)
        return sorted(found)

    def files(self, tenant: str, table: str, first: date, last: date) -> list[str]:
        """Local paths of every file of ``table`` from day ``first`` to ``last`` (inclusive), fetched
        into ``cache_dir`` when the bucket is remote (each file once: files never change)."""
        paths: list[str] = []
        for day in self.days(tenant, table):
            if first <= day <= last:
                paths.extend(
                    self.local(p) for p in sorted(self.store.list(layout.partition(tenant, table, day)))
                )
        return [p for p in paths if p.endswith(".parquet")]

    def local(self, path: str) -> str:
        """A local path holding the object ``path``: the file itself in a local bucket, else a copy
        fetched once into ``cache_dir`` (objects here are never rewritten under the same name)."""
        local = self.store.local_path(path)
        if local is not None:
            return local
        target = self.cache_dir / path
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}")
            tmp.write_bytes(self.store.get(path))
            tmp.replace(target)
        return str(target)

    def expire(self, tenant: str, keep_days: int, today: date) -> list[date]:
        """Delete the day partitions older than ``keep_days`` days before ``today`` (every table).
        Returns the days deleted."""
        cutoff = today - timedelta(days=keep_days)
        gone: set[date] = set()
        for table in [t for t, _ in TABLES.values()] + DERIVED:
            for day in self.days(tenant, table):
                if day < cutoff:
                    for path in list(self.store.list(layout.partition(tenant, table, day))):
                        self.store.delete(path)
                    gone.add(day)
        return sorted(gone)
