"""Versioned JSON documents in object storage, with optimistic concurrency by ``put_if_absent``.

Layout, per document key, under a root folder of a (tenant-scoped) store::

    <root>/<key>/v00000001.json   immutable revisions: {"revision": n, "deleted": bool, "body": {...}}
    <root>/<key>/head.json        hint of the latest revision (may lag, never leads)

(the ``v`` prefix and the ``body`` key are parameters: containers keep their ``r00000001.json`` files
with a ``container`` key).

A writer that read revision ``n`` creates ``n + 1`` with ``put_if_absent``: of concurrent writers that
read the same revision exactly one succeeds, so no update is lost (the compare-and-swap
:mod:`aisle.recs.containers` uses for containers). A reader takes the hint, then probes forward until a
revision is missing. A delete writes a tombstone revision; revisions are never reused.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import orjson

from aisle.core.storage.blob import BlobNotFound, BlobStore
from aisle.core.storage.failures import backend_failures

Doc = dict[str, Any]


class RevisionLog:
    """The revisions of every document under ``root`` in ``scope`` (see the module docstring).

    Decoded revisions are cached (they are immutable), so reading an unchanged document costs a hint
    read and one existence probe. On a local store both are plain file calls (microseconds).

    Args:
        scope: the (tenant-scoped) store.
        root: folder holding one sub-folder per document key.
        prefix: file name prefix of a revision (``v`` gives ``v00000001.json``).
        body_key: the key of the document inside a revision file.
    """

    def __init__(
        self,
        scope: BlobStore,
        root: str,
        *,
        prefix: str = "v",
        body_key: str = "body",
        cache_size: int = 4096,
    ) -> None:
        self.scope = scope
        self.root = root.strip("/")
        self.prefix = prefix
        self.body_key = body_key
        self.cache_size = cache_size
        self._cache: dict[tuple[str, int], Doc | None] = {}
        self._lock = threading.Lock()

    def revision_path(self, key: str, revision: int) -> str:
        return f"{self.root}/{key}/{self.prefix}{revision:08d}.json"

    def _head_path(self, key: str) -> str:
        return f"{self.root}/{key}/head.json"

    def read(self, path: str) -> bytes:
        """An object's bytes, with plain file IO on a local store. Raises BlobNotFound, StorageUnavailable."""
        local = self.scope.local_path(path)
        if local is None:
            return self.scope.get(path)
        try:
            with backend_failures("read", path), open(local, "rb") as f:
                return f.read()
        except FileNotFoundError as exc:
            raise BlobNotFound(f"object '{path}' not found") from exc

    def _exists(self, path: str) -> bool:
        local = self.scope.local_path(path)
        return os.path.exists(local) if local is not None else self.scope.exists(path)

    def names(self) -> list[str]:
        """Every key that has at least one revision (deleted ones included)."""
        return list(self.scope.list_dirs(self.root))

    def latest(self, key: str) -> tuple[int, Doc | None]:
        """(latest revision, its body or None when deleted); (0, None) for a key never written."""
        try:
            revision = int(orjson.loads(self.read(self._head_path(key)))["revision"])
        except (BlobNotFound, ValueError, KeyError, TypeError):
            revision = 0
        while self._exists(self.revision_path(key, revision + 1)):
            revision += 1
        if revision == 0:
            return 0, None
        cached = self._cache.get((key, revision), ...)
        if cached is not ...:
            return revision, cached  # type: ignore[return-value]
        doc = orjson.loads(self.read(self.revision_path(key, revision)))
        body = None if doc.get("deleted") else doc[self.body_key]
        with self._lock:
            if len(self._cache) >= self.cache_size:
                self._cache.clear()
            self._cache[(key, revision)] = body
        return revision, body

    def revisions(self, key: str) -> list[tuple[int, Doc | None]]:
        """Every revision of ``key``, oldest first: ``(revision, body or None for a tombstone)``."""
        latest, _ = self.latest(key)
        out: list[tuple[int, Doc | None]] = []
        for revision in range(1, latest + 1):
            try:
                doc = orjson.loads(self.read(self.revision_path(key, revision)))
            except BlobNotFound:
                continue
            out.append((revision, None if doc.get("deleted") else doc[self.body_key]))
        return out

    def write(self, key: str, revision: int, body: Doc | None) -> bool:
        """Create ``revision`` (``body`` None: a tombstone). False when another writer created it first."""
        doc = {"revision": revision, "deleted": body is None, self.body_key: body}
        if not self.scope.put_if_absent(self.revision_path(key, revision), orjson.dumps(doc)):
            return False
        self.scope.put(self._head_path(key), orjson.dumps({"revision": revision}))
        return True
