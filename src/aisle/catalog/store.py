"""Versioned catalog storage in the tenant's object-storage scope.

Layout under ``<tenant>/catalog/``::

    current.json                  {"version": "...", "count": N, "created_at": "..."}
    <version>/products.parquet    one row per product: ``id`` (string) + one column per attribute

A new import writes a new ``<version>/`` completely, then replaces ``current.json``: readers see the
old catalog or the new one, never a half-written one.
"""

from __future__ import annotations

import io
import secrets
import threading
from dataclasses import dataclass
from datetime import UTC, datetime

import orjson
import polars as pl

from aisle.core.errors import ErrorCode, NotFound
from aisle.core.storage import BlobNotFound, BlobStore
from aisle.core.storage.signature import read_object

POINTER = "catalog/current.json"


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


def new_version() -> str:
    """A sortable, unique version id: UTC timestamp plus random suffix."""
    return datetime.now(UTC).strftime("v%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)


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

    def write(self, products: pl.DataFrame, *, source: str | None = None) -> Catalog:
        """Write ``products`` as a new version and make it current. Returns the new catalog."""
        if "id" not in products.columns:
            raise ValueError("products need an 'id' column")
        version = new_version()
        buf = io.BytesIO()
        products.write_parquet(buf, compression="zstd")
        self.scope.put(f"catalog/{version}/products.parquet", buf.getvalue())
        pointer = {
            "version": version,
            "count": products.height,
            "created_at": datetime.now(UTC).isoformat(),
            "source": source,
        }
        self.scope.put(POINTER, orjson.dumps(pointer))
        catalog = Catalog(version=version, products=products)
        with self._lock:
            self._cache = catalog
        return catalog
