"""Immutable numbered versions of an artifact in a bucket: ``<directory>/v<N>/...`` plus a pointer.

Several artifacts are published this way (the search rankers, the behaviour tables, the popularity
tables): every file of a version is written once and never rewritten, the pointer last, so a reader that
finds the pointer finds whole files. :func:`claim_version` is how a writer takes the next number: it
creates the version's first file with ``put_if_absent`` (an atomic create on every store), so two
writers racing each get their own version instead of one overwriting the other's files.
"""

from __future__ import annotations

from aisle.core.errors import Conflict, ErrorCode
from aisle.core.storage.blob import BlobStore

ATTEMPTS = 20
"""Version numbers tried before giving up (each taken by another writer at the same moment)."""


def versions(scope: BlobStore, directory: str) -> list[int]:
    """The version numbers under ``directory`` (its ``v<N>`` subdirectories), ascending."""
    names = scope.list_dirs(directory)
    return sorted(int(d[1:]) for d in names if d[:1] == "v" and d[1:].isdigit())


def claim_version(scope: BlobStore, directory: str, name: str, data: bytes) -> int:
    """Take the next free version: write ``data`` as ``<directory>/v<N>/<name>`` with ``put_if_absent``
    for N from one past the highest existing version upward; returns N.

    Raises:
        Conflict: ``model_artifact_exists``, :data:`ATTEMPTS` numbers in a row were taken by other
            writers.
    """
    version = max(versions(scope, directory), default=0) + 1
    for _ in range(ATTEMPTS):
        if scope.put_if_absent(f"{directory}/v{version}/{name}", data):
            return version
        version += 1
    raise Conflict(
        f"{ATTEMPTS} versions of {directory} in a row were taken by other writers",
        code=ErrorCode.MODEL_ARTIFACT_EXISTS,
        details={"directory": directory},
    )
