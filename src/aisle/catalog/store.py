"""Versioned catalog storage in the tenant's object-storage scope.

Layout under ``<tenant>/catalog/``::

    current.json                  {"version": "...", "count": N, "created_at": "...", "source": "...",
                                  "sequence": S}
    <version>/products.parquet    one row per product: ``id`` (string) + one column per attribute
    <version>/update_times.json   (versions folded from the change log) each product's update times

``sequence`` is the change log's number the version includes (:mod:`aisle.catalog.changes`): entries up
to it are in the version, the ones after are applied on top of it. A version without one includes
none (0).

A new import writes a new ``<version>/`` completely, then replaces ``current.json``: readers see the
old catalog or the new one, never a half-written one.
"""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import orjson
import polars as pl

from aisle.core.errors import ErrorCode, NotFound
from aisle.core.storage import BlobNotFound, BlobStore
from aisle.core.storage.signature import read_object

POINTER = "catalog/current.json"


@dataclass(frozen=True)
class Pointer:
    """What ``current.json`` says: the version, the change-log sequence it includes, when it was written."""

    version: str
    sequence: int
    created_at: str


class CatalogNotFound(NotFound):
    code = ErrorCode.CATALOG_NOT_FOUND


@dataclass(frozen=True)
class Catalog:
    """One immutable catalog version: ``products`` has an ``id`` (Utf8) column and one per attribute."""

    version: str
    products: pl.DataFrame

    @property
    def count(self) -> int:
        return self.products.height


KEEP_VERSIONS = 4
"""Catalog versions compaction keeps (the current one and the three before it): a process that read an
older pointer is still loading one of those, and the change log behind them is pruned anyway."""


def new_version() -> str:
    """A unique version id that sorts by time: UTC timestamp to the microsecond plus a random suffix
    (ids of the older, second-only form sort before the newer ones of their second)."""
    return datetime.now(UTC).strftime("v%Y%m%dT%H%M%S%f") + "-" + secrets.token_hex(3)


class CatalogStore:
    """Read and write a tenant's catalog versions (``scope`` is the tenant's prefixed store)."""

    def __init__(self, scope: BlobStore) -> None:
        self.scope = scope
        self._cache: Catalog | None = None
        self._lock = threading.Lock()

    def current_version(self) -> str | None:
        try:
            return str(orjson.loads(read_object(self.scope, POINTER))["version"])
        except BlobNotFound:
            return None

    def pointer(self) -> Pointer | None:
        """The current version's pointer, None before any catalog. Raises StorageUnavailable (503)."""
        try:
            doc = orjson.loads(read_object(self.scope, POINTER))
        except BlobNotFound:
            return None
        return Pointer(str(doc["version"]), int(doc.get("sequence") or 0), str(doc.get("created_at") or ""))

    def version_file(self, version: str, name: str) -> bytes | None:
        """A file written beside ``version``'s products (``files`` of :meth:`write`), None when absent."""
        try:
            return self.scope.get(f"catalog/{version}/{name}")
        except BlobNotFound:
            return None

    def load(self, version: str | None = None) -> Catalog:
        """The given (default: current) catalog version.

        Raises:
            CatalogNotFound: the tenant has no catalog yet, or the version does not exist.
        """
        version = version or self.current_version()
        if version is None:
            raise CatalogNotFound("the tenant has no catalog yet: run `aisle catalog import`")
        cached = self._cache
        if cached is not None and cached.version == version:
            return cached
        try:
            raw = self.scope.get(f"catalog/{version}/products.parquet")
        except BlobNotFound as exc:
            raise CatalogNotFound(f"catalog version '{version}' not found") from exc
        catalog = Catalog(version=version, products=pl.read_parquet(io.BytesIO(raw)))
        with self._lock:
            self._cache = catalog
        return catalog

    def write(
        self,
        products: pl.DataFrame,
        *,
        source: str | None = None,
        sequence: int = 0,
        files: Mapping[str, bytes] | None = None,
    ) -> Catalog:
        """Write ``products`` as a new version and make it current. Returns the new catalog.

        ``sequence``: the change-log number the version includes; ``files``: more files of the version
        (name -> bytes), written before the pointer like the products."""
        if "id" not in products.columns:
            raise ValueError("products need an 'id' column")
        version = new_version()
        buf = io.BytesIO()
        products.write_parquet(buf, compression="zstd")
        self.scope.put(f"catalog/{version}/products.parquet", buf.getvalue())
        for name, data in (files or {}).items():
            self.scope.put(f"catalog/{version}/{name}", data)
        pointer = {
            "version": version,
            "count": products.height,
            "created_at": datetime.now(UTC).isoformat(),
            "source": source,
            "sequence": sequence,
        }
        self.scope.put(POINTER, orjson.dumps(pointer))
        catalog = Catalog(version=version, products=products)
        with self._lock:
            self._cache = catalog
        return catalog

    def prune_versions(self, keep: int = KEEP_VERSIONS) -> list[str]:
        """Delete every version but the current one and the ``keep - 1`` newest others (version ids sort
        by time); returns the versions deleted. A process still loading a deleted version gets
        CatalogNotFound and loads the current one. Raises StorageUnavailable (503)."""
        current = self.current_version()
        older = sorted(v.strip("/") for v in self.scope.list_dirs("catalog/") if v.strip("/") != current)
        gone = older[: max(len(older) - (keep - 1), 0)]
        for version in gone:
            for path in self.scope.list(f"catalog/{version}/"):
                self.scope.delete(path)
            folder = self.scope.local_path(f"catalog/{version}")
            if folder is not None:  # a local bucket keeps the empty folder, which S3 would not list
                with contextlib.suppress(OSError):
                    os.rmdir(folder)
        return gone
