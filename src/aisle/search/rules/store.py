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

from aisle.core.errors import Conflict, NotFound
from aisle.core.storage import BlobNotFound, BlobStore
from aisle.core.storage.revisions import RevisionLog
from aisle.search.rules.model import Rule, RuleBody

ROOT = "rules"
INDEX_PATH = f"{ROOT}/_index.json"


class RuleNotFound(NotFound):
    code = "rule_not_found"


class RuleExists(Conflict):
    code = "rule_exists"


class RuleVersionConflict(Conflict):
    code = "rule_version_conflict"


def new_rule_id() -> str:
    """A random rule id: 12 hex digits (48 bits)."""
    return uuid.uuid4().hex[:12]


class RuleStore:
    """Rules of one tenant (``scope``: the tenant-scoped store)."""

    def __init__(self, scope: BlobStore) -> None:
        self.scope = scope
        self.log = RevisionLog(scope, ROOT)

    def _latest(self, rule_id: str) -> tuple[int, Rule | None]:
        revision, body = self.log.latest(rule_id)
        return revision, None if body is None else Rule.model_validate(body)

    def _write(self, rule_id: str, revision: int, rule: Rule | None) -> bool:
        body = None if rule is None else rule.model_dump(mode="json")
        if not self.log.write(rule_id, revision, body):
            return False
        self._touch(rule_id)
        return True

    def _touch(self, rule_id: str) -> None:
        try:
            generation = int(orjson.loads(self.log.read(INDEX_PATH))["generation"])
        except (BlobNotFound, ValueError, KeyError, TypeError):
            generation = 0
        index = {"generation": generation + 1, "stamp": uuid.uuid4().hex, "ruleId": rule_id}
        self.scope.put(INDEX_PATH, orjson.dumps(index))

    def stamp(self) -> bytes:
        """The raw bytes of ``rules/_index.json`` (b"" when no rule was ever written)."""
        try:
            return self.log.read(INDEX_PATH)
        except BlobNotFound:
            return b""

    def get(self, rule_id: str) -> Rule:
        """The current rule. Raises :class:`RuleNotFound` (404)."""
        _, rule = self._latest(rule_id)
        if rule is None:
            raise RuleNotFound(f"rule '{rule_id}' does not exist", details={"ruleId": rule_id})
        return rule

    def list(self) -> builtins.list[Rule]:
        """Every live rule, highest priority first, then by id."""
        rules = [r for r in (self._latest(k)[1] for k in self.log.names()) if r is not None]
        return sorted(rules, key=lambda r: (-r.priority, r.id))

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
        revision, current = self._latest(rule_id)
        if current is None:
            raise RuleNotFound(f"rule '{rule_id}' does not exist", details={"ruleId": rule_id})
        if current.version != version:
            raise self._conflict(rule_id, version, current.version)
        rule = Rule(
            **body.model_dump(),
            id=rule_id,
            version=revision + 1,
            createdAt=current.createdAt,
            updatedAt=datetime.now(UTC),
        )
        if not self._write(rule_id, revision + 1, rule):
            _, now_current = self._latest(rule_id)
            raise self._conflict(rule_id, version, now_current.version if now_current else None)
        return rule

    def delete(self, rule_id: str, version: int | None = None) -> None:
        """Delete the rule (only at ``version`` when given).

        Raises:
            RuleNotFound (404), RuleVersionConflict (409): as for :meth:`replace`.
        """
        revision, current = self._latest(rule_id)
        if current is None:
            raise RuleNotFound(f"rule '{rule_id}' does not exist", details={"ruleId": rule_id})
        if version is not None and current.version != version:
            raise self._conflict(rule_id, version, current.version)
        if not self._write(rule_id, revision + 1, None):
            raise self._conflict(rule_id, current.version, None)

    @staticmethod
    def _conflict(rule_id: str, given: int, current: int | None) -> RuleVersionConflict:
        return RuleVersionConflict(
            f"rule '{rule_id}' is at version {current}, not {given}: re-read it and retry",
            details={"ruleId": rule_id, "givenVersion": given, "currentVersion": current},
        )
