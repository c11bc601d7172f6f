"""The one translation of object-storage failures into Aisle's error root.

Every failure of the backend other than "not found" / "already exists" (an S3 server that is down,
times out, answers 5xx or refuses the credentials; a local disk error) leaves the storage layer as
:class:`~aisle.core.errors.StorageUnavailable` (503 ``storage_unavailable`` with ``Retry-After``), so
no caller handles backend exceptions and no request turns an outage into a 500.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from obstore.exceptions import AlreadyExistsError, BaseError
from obstore.exceptions import NotFoundError as ObstoreNotFound

from aisle.core.errors import StorageUnavailable

log = logging.getLogger("aisle.storage")

PASSED_THROUGH = (ObstoreNotFound, FileNotFoundError, AlreadyExistsError, FileExistsError)
"""Answers, not failures: the caller turns them into ``BlobNotFound`` or ``False``."""


@contextlib.contextmanager
def backend_failures(operation: str, path: str) -> Iterator[None]:
    """Raise :class:`StorageUnavailable` for an obstore error or ``OSError`` of ``operation`` on ``path``
    (``PASSED_THROUGH`` errors are re-raised as they are). The cause is logged, not shown to clients:
    it names the server."""
    try:
        yield
    except (BaseError, OSError) as exc:
        if isinstance(exc, PASSED_THROUGH):
            raise
        log.warning("object storage failed to %s %r: %s", operation, path, str(exc).split("\n")[0][:500])
        raise StorageUnavailable(
            f"object storage failed to {operation} '{path}'; retry shortly",
            details={"operation": operation, "path": path},
        ) from exc
