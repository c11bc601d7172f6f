"""The merchandising rules of one tenant in object storage: create, read, list, replace, delete.

Layout in the tenant's scope (see :mod:`aisle.core.storage.revisions`)::

    rules/<rule_id>/v00000003.json   immutable revisions; the rule's ``version`` is its revision number
    rules/<rule_id>/head.json        hint of the latest revision
    rules/_index.json                {"generation", "stamp", "ruleId"}: rewritten after every change

A replace names the version it read; when that is not the current one, or another writer created the
next revision first, it gets :class:`RuleVersionConflict` (409) and nothing is written. The index file
is what search processes check on every request (:class:`aisle.search.rules.book.RuleBooks`): a new
``stamp`` (random, so two writers racing on ``generation`` still both change it) means reload.
"""

from __future__ import annotations

import builtins
import uuid
from datetime import UTC, datetime

import orjson

from aisle.core.errors import Conflict, ErrorCode, NotFound
from aisle.core.storage import BlobNotFound, BlobStore
from aisle.core.storage.documents import VersionedDocuments
from aisle.core.storage.revisions import RevisionLog
from aisle.core.validation import is_resource_id
from aisle.search.rules.model import Rule, RuleBody

ROOT = "rules"
INDEX_PATH = f"{ROOT}/_index.json"


class RuleNotFound(NotFound):
    code = ErrorCode.RULE_NOT_FOUND


class RuleExists(Conflict):
    code = ErrorCode.RULE_EXISTS


class RuleVersionConflict(Conflict):
    code = ErrorCode.RULE_VERSION_CONFLICT


def new_rule_id() -> str:
    """A random rule id: 12 hex digits (48 bits)."""
    return uuid.uuid4().hex[:12]


class RuleStore(VersionedDocuments[Rule]):
    """Rules of one tenant (``scope``: the tenant-scoped store); reading and the compare-and-swap are
    :class:`~aisle.core.storage.documents.VersionedDocuments`."""

    model = Rule

    def __init__(self, scope: BlobStore) -> None:
        super().__init__(RevisionLog(scope, ROOT))
        self.scope = scope

    def _not_found(self, doc_id: str) -> RuleNotFound:
        return RuleNotFound(f"rule '{doc_id}' does not exist", details={"ruleId": doc_id})

    def _conflict(self, doc_id: str, given: int, current: int | None) -> RuleVersionConflict:
        return RuleVersionConflict(
            f"rule '{doc_id}' is at version {current}, not {given}: re-read it and retry",
            details={"ruleId": doc_id, "givenVersion": given, "currentVersion": current},
        )

    def _written(self, doc_id: str) -> None:
        try:
            generation = int(orjson.loads(self.log.read(INDEX_PATH))["generation"])
        except (BlobNotFound, ValueError, KeyError, TypeError):
            generation = 0
        index = {"generation": generation + 1, "stamp": uuid.uuid4().hex, "ruleId": doc_id}
        self.scope.put(INDEX_PATH, orjson.dumps(index))

    def stamp(self) -> bytes:
        """The raw bytes of ``rules/_index.json`` (b"" when no rule was ever written)."""
        try:
            return self.log.read(INDEX_PATH)
        except BlobNotFound:
            return b""

    def list(self) -> builtins.list[Rule]:
        """Every live rule, highest priority first, then by id."""
        return sorted(self._live(), key=lambda r: (-r.priority, r.id))

    def history(self, rule_id: str) -> builtins.list[tuple[int, Rule | None]]:
        """Every version of the rule, newest first: ``(version, rule or None where it was deleted)``.

        Raises RuleNotFound (404) for an id never written."""
        revisions = self.log.revisions(rule_id) if is_resource_id(rule_id) else []
        if not revisions:
            raise self._not_found(rule_id)
        return [(n, None if body is None else Rule.model_validate(body)) for n, body in reversed(revisions)]

    def create(self, body: RuleBody, rule_id: str | None = None) -> Rule:
        """Store a new rule (a random id when none is given).

        Its version is 1, or the next unused one when the id belonged to a deleted rule, so a client
        holding a version of the old rule can never overwrite the new one.

        Raises:
            RuleExists (409): the id is taken by a live rule.
        """
        rule_id = rule_id or new_rule_id()
        revision, current = self._latest(rule_id)
        now = datetime.now(UTC)
        rule = Rule(**body.model_dump(), id=rule_id, version=revision + 1, createdAt=now, updatedAt=now)
        if current is not None or not self._write(rule_id, revision + 1, rule):
            raise RuleExists(f"rule '{rule_id}' already exists", details={"ruleId": rule_id})
        return rule

    def replace(self, rule_id: str, body: RuleBody, version: int) -> Rule:
        """Replace the rule whose current version is ``version``; the result has ``version + 1``.

        Raises:
            RuleNotFound (404): no such rule.
            RuleVersionConflict (409): ``version`` is stale, or a concurrent writer won; nothing changed.
        """
        revision, current = self._current(rule_id, version)
        rule = Rule(
            **body.model_dump(),
            id=rule_id,
            version=revision + 1,
            createdAt=current.createdAt,
            updatedAt=datetime.now(UTC),
        )
        return self._replace(rule_id, revision, rule, version)
