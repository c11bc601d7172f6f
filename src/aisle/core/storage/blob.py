"""The BlobStore protocol and its tenant-prefixing wrapper.

Paths are ``/``-separated relative keys (``fashion/catalog/v3/products.parquet``); no leading slash.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from typing import Protocol, runtime_checkable

from aisle.core.errors import ErrorCode, NotFound


class BlobNotFound(NotFound):
    code = ErrorCode.BLOB_NOT_FOUND


@runtime_checkable
class BlobStore(Protocol):
    """Minimal object-storage interface every backend implements.

    ``put`` is atomic from a reader's point of view: a reader sees the old bytes or the new,
    never a partial object (true of S3 PUT and of the local backend's rename).
    """

    def get(self, path: str) -> bytes:
        """Return the object's bytes. Raises :class:`BlobNotFound`."""
        ...

    def put(self, path: str, data: bytes) -> None:
        """Write (or overwrite) an object."""
        ...

    def put_if_absent(self, path: str, data: bytes) -> bool:
        """Create an object only when it does not exist. Returns False when it already existed."""
        ...

    def exists(self, path: str) -> bool: ...

    def delete(self, path: str) -> None:
        """Delete an object; deleting a missing object is not an error."""
        ...

    def list(self, prefix: str = "") -> Iterator[str]:
        """Yield the paths of every object under ``prefix`` (recursive)."""
        ...

    def list_dirs(self, prefix: str = "") -> builtins.list[str]:
        """The immediate "directory" names directly under ``prefix``."""
        ...

    def local_path(self, path: str) -> str | None:
        """A filesystem path for the object when the backend is local, else None."""
        ...


def _join(prefix: str, path: str) -> str:
    prefix = prefix.strip("/")
    path = path.lstrip("/")
    return f"{prefix}/{path}" if prefix else path


class PrefixBlobStore:
    """A view of another store under a fixed prefix, so call sites never build tenant paths.

    ``PrefixBlobStore(store, "fashion").get("catalog/current.json")`` reads
    ``fashion/catalog/current.json``. (Same idea as quickwit's ``PrefixStorage``.)
    """

    def __init__(self, inner: BlobStore, prefix: str) -> None:
        self.inner = inner
        self.prefix = prefix.strip("/")

    def _p(self, path: str) -> str:
        return _join(self.prefix, path)

    def get(self, path: str) -> bytes:
        return self.inner.get(self._p(path))

    def put(self, path: str, data: bytes) -> None:
        self.inner.put(self._p(path), data)

    def put_if_absent(self, path: str, data: bytes) -> bool:
        return self.inner.put_if_absent(self._p(path), data)

    def exists(self, path: str) -> bool:
        return self.inner.exists(self._p(path))

    def delete(self, path: str) -> None:
        self.inner.delete(self._p(path))

    def list(self, prefix: str = "") -> Iterator[str]:
        cut = len(self.prefix) + 1 if self.prefix else 0
        for p in self.inner.list(self._p(prefix)):
            yield p[cut:]

    def list_dirs(self, prefix: str = "") -> builtins.list[str]:
        return self.inner.list_dirs(self._p(prefix))

    def local_path(self, path: str) -> str | None:
        return self.inner.local_path(self._p(path))
