"""Documents with a user-visible ``version`` over a :class:`~aisle.core.storage.revisions.RevisionLog`.

The optimistic-concurrency rules every versioned store of Aisle follows (containers, merchandising
rules): a replace or delete names the version it read; when that is not the current one, or another
writer created the next revision first, it raises the store's conflict error (409) and nothing is
written. Subclasses say how a document is validated, which errors they raise, and how a new document
is built; the reading and the compare-and-swap live here once.
"""

from __future__ import annotations

import builtins
import threading
from typing import Generic, TypeVar

from pydantic import BaseModel

from aisle.core.errors import AisleError
from aisle.core.storage.revisions import RevisionLog
from aisle.core.validation import is_resource_id

D = TypeVar("D", bound=BaseModel)  # a pydantic model with an ``int`` field ``version``


class VersionedDocuments(Generic[D]):
    """Validated documents of type ``model`` keyed by id, one :class:`RevisionLog` underneath.

    Validated documents are cached per (id, revision), bounded by ``cache_size``: revisions are
    immutable, and readers such as the predict service read the head on every request.
    """

    model: type[D]

    def __init__(self, log: RevisionLog, cache_size: int = 1024) -> None:
        self.log = log
        self.cache_size = cache_size
        self._parsed: dict[tuple[str, int], D | None] = {}
        self._lock = threading.Lock()

    # ---- what a subclass says -----------------------------------------------------------------
    def _not_found(self, doc_id: str) -> AisleError:
        raise NotImplementedError

    def _conflict(self, doc_id: str, given: int, current: int | None) -> AisleError:
        raise NotImplementedError

    def _written(self, doc_id: str) -> None:
        """Called after every successful write (a store may publish a change stamp)."""

    # ---- reading ------------------------------------------------------------------------------
    def _latest(self, doc_id: str) -> tuple[int, D | None]:
        """(latest revision, its document or None when deleted); (0, None) for a never-written id."""
        revision, body = self.log.latest(doc_id)
        if revision == 0:
            return 0, None
        key = (doc_id, revision)
        if key not in self._parsed:
            doc = None if body is None else self.model.model_validate(body)
            with self._lock:
                if len(self._parsed) >= self.cache_size:
                    self._parsed.clear()
                self._parsed[key] = doc
        return revision, self._parsed[key]

    def find(self, doc_id: str) -> D | None:
        """The current document, or None when the id was never created, is deleted or cannot be an id."""
        if not is_resource_id(doc_id):
            return None
        return self._latest(doc_id)[1]

    def get(self, doc_id: str) -> D:
        """The current document. Raises the store's not-found error (404)."""
        doc = self.find(doc_id)
        if doc is None:
            raise self._not_found(doc_id)
        return doc

    def _live(self) -> builtins.list[D]:
        """Every live document, in no particular order."""
        docs = (self._latest(doc_id)[1] for doc_id in self.log.names())
        return [d for d in docs if d is not None]

    # ---- writing ------------------------------------------------------------------------------
    def _write(self, doc_id: str, revision: int, doc: D | None) -> bool:
        if not self.log.write(doc_id, revision, None if doc is None else doc.model_dump(mode="json")):
            return False
        self._written(doc_id)
        return True

    def _current(self, doc_id: str, version: int | None) -> tuple[int, D]:
        """(revision, document) when ``doc_id`` is live and at ``version`` (any version when None).

        Raises the store's not-found (404) or conflict (409) error."""
        revision, current = self._latest(doc_id)
        if current is None:
            raise self._not_found(doc_id)
        if version is not None and _version(current) != version:
            raise self._conflict(doc_id, version, _version(current))
        return revision, current

    def _replace(self, doc_id: str, revision: int, doc: D, given: int) -> D:
        """Write ``doc`` as revision ``revision + 1``; raises the conflict error when another writer
        got there first (nothing is changed: re-read and retry)."""
        if not self._write(doc_id, revision + 1, doc):
            _, now = self._latest(doc_id)
            raise self._conflict(doc_id, given, _version(now) if now is not None else None)
        return doc

    def delete(self, doc_id: str, version: int | None = None) -> None:
        """Delete (only at ``version`` when given) by writing a tombstone revision.

        Raises the store's not-found (404) or conflict (409) error."""
        revision, current = self._current(doc_id, version)
        if not self._write(doc_id, revision + 1, None):
            raise self._conflict(doc_id, _version(current), None)


def _version(doc: BaseModel) -> int:
    return int(doc.version)  # type: ignore[attr-defined]
