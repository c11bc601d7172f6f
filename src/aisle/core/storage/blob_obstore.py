"""BlobStore backed by obstore (local filesystem, S3 and S3-compatible servers).

Every failure of the backend other than "not found" / "already exists" (an S3 server that is down,
times out, answers 5xx or refuses the credentials; a local disk error) leaves this module as one error,
:class:`~aisle.core.errors.StorageUnavailable` (503 ``storage_unavailable`` with ``Retry-After``), so
no caller handles backend exceptions and no request turns an outage into a 500.
"""

from __future__ import annotations

import builtins
import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import obstore
from obstore.exceptions import AlreadyExistsError, BaseError
from obstore.exceptions import NotFoundError as ObstoreNotFound

from aisle.core.errors import StorageUnavailable
from aisle.core.storage.blob import BlobNotFound

log = logging.getLogger("aisle.storage")


@contextlib.contextmanager
def _backend(operation: str, path: str) -> Iterator[None]:
    """Translate a backend failure of ``operation`` on ``path`` into :class:`StorageUnavailable`."""
    try:
        yield
    except (BaseError, OSError) as exc:
        if isinstance(exc, ObstoreNotFound | FileNotFoundError | AlreadyExistsError | FileExistsError):
            raise
        # the cause names the server and its answer: for the log, not for the client
        log.warning("object storage failed to %s %r: %s", operation, path, str(exc).split("\n")[0][:500])
        raise StorageUnavailable(
            f"object storage failed to {operation} '{path}'; retry shortly",
            details={"operation": operation, "path": path},
        ) from exc


class ObstoreBlobStore:
    """A :class:`~aisle.core.storage.blob.BlobStore` over any obstore store.

    Args:
        store: an ``obstore.store.*Store`` instance.
        root: for a ``LocalStore``, its directory (enables :meth:`local_path`).

    Raises (from every method): StorageUnavailable (503) when the backend fails; see the module docstring.
    """

    def __init__(self, store: Any, root: Path | None = None) -> None:
        self.store = store
        self.root = root

    def get(self, path: str) -> bytes:
        try:
            with _backend("read", path):
                return bytes(obstore.get(self.store, path).bytes())
        except (ObstoreNotFound, FileNotFoundError) as exc:
            raise BlobNotFound(f"object '{path}' not found") from exc

    def put(self, path: str, data: bytes) -> None:
        with _backend("write", path):
            obstore.put(self.store, path, data)

    def put_if_absent(self, path: str, data: bytes) -> bool:
        try:
            with _backend("create", path):
                obstore.put(self.store, path, data, mode="create")
        except (AlreadyExistsError, FileExistsError):
            return False
        return True

    def exists(self, path: str) -> bool:
        try:
            with _backend("probe", path):
                obstore.head(self.store, path)
        except (ObstoreNotFound, FileNotFoundError):
            return False
        return True

    def delete(self, path: str) -> None:
        with contextlib.suppress(ObstoreNotFound, FileNotFoundError), _backend("delete", path):
            obstore.delete(self.store, path)

    def list(self, prefix: str = "") -> Iterator[str]:
        prefix = prefix.strip("/")
        if self.root is not None and not (self.root / prefix).exists():
            return
        with _backend("list", prefix):
            for batch in obstore.list(self.store, prefix=prefix or None):
                for meta in batch:
                    yield meta["path"]

    def list_dirs(self, prefix: str = "") -> builtins.list[str]:
        prefix = prefix.strip("/")
        if self.root is not None and not (self.root / prefix).is_dir():
            return []
        with _backend("list", prefix):
            result = obstore.list_with_delimiter(self.store, prefix=prefix or None)
        cut = len(prefix) + 1 if prefix else 0
        return sorted(p[cut:].rstrip("/") for p in result["common_prefixes"])

    def local_path(self, path: str) -> str | None:
        if self.root is None:
            return None
        return os.fspath(self.root / path)
