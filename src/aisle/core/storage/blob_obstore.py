"""BlobStore backed by obstore (local filesystem, S3 and S3-compatible servers).

Every call runs inside :func:`~aisle.core.storage.failures.backend_failures`: a backend failure leaves
this module as ``StorageUnavailable`` (503), never as an obstore exception.
"""

from __future__ import annotations

import builtins
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import obstore
from obstore.exceptions import AlreadyExistsError
from obstore.exceptions import NotFoundError as ObstoreNotFound

from aisle.core.storage.blob import BlobNotFound
from aisle.core.storage.failures import backend_failures


class ObstoreBlobStore:
    """A :class:`~aisle.core.storage.blob.BlobStore` over any obstore store.

    Args:
        store: an ``obstore.store.*Store`` instance.
        root: for a ``LocalStore``, its directory (enables :meth:`local_path`).

    Raises (from every method): StorageUnavailable (503) when the backend fails.
    """

    def __init__(self, store: Any, root: Path | None = None) -> None:
        self.store = store
        self.root = root

    def get(self, path: str) -> bytes:
        try:
            with backend_failures("read", path):
                return bytes(obstore.get(self.store, path).bytes())
        except (ObstoreNotFound, FileNotFoundError) as exc:
            raise BlobNotFound(f"object '{path}' not found") from exc

    def put(self, path: str, data: bytes) -> None:
        with backend_failures("write", path):
            obstore.put(self.store, path, data)

    def put_if_absent(self, path: str, data: bytes) -> bool:
        try:
            with backend_failures("create", path):
                obstore.put(self.store, path, data, mode="create")
        except (AlreadyExistsError, FileExistsError):
            return False
        return True

    def exists(self, path: str) -> bool:
        try:
            with backend_failures("probe", path):
                obstore.head(self.store, path)
        except (ObstoreNotFound, FileNotFoundError):
            return False
        return True

    def delete(self, path: str) -> None:
        with contextlib.suppress(ObstoreNotFound, FileNotFoundError), backend_failures("delete", path):
            obstore.delete(self.store, path)

    def list(self, prefix: str = "") -> Iterator[str]:
        prefix = prefix.strip("/")
        if self.root is not None and not (self.root / prefix).exists():
            return
        with backend_failures("list", prefix):
            for batch in obstore.list(self.store, prefix=prefix or None):
                for meta in batch:
                    yield meta["path"]

    def list_dirs(self, prefix: str = "") -> builtins.list[str]:
        prefix = prefix.strip("/")
        if self.root is not None and not (self.root / prefix).is_dir():
            return []
        with backend_failures("list", prefix):
            result = obstore.list_with_delimiter(self.store, prefix=prefix or None)
        cut = len(prefix) + 1 if prefix else 0
        return sorted(p[cut:].rstrip("/") for p in result["common_prefixes"])

    def local_path(self, path: str) -> str | None:
        if self.root is None:
            return None
        return os.fspath(self.root / path)
