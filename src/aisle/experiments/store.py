"""A tenant's experiments in object storage, and the running ones as serving processes see them.

Layout in the tenant's scope, like the merchandising rules (:mod:`aisle.search.rules.store`)::

    experiments/<id>/v00000003.json   immutable revisions (every change, status changes included)
    experiments/<id>/head.json        hint of the latest revision
    experiments/_index.json           {"generation", "stamp", "experimentId"}: rewritten after each change

A revision is written with ``put_if_absent`` before the index, so a reader that sees a new stamp finds
the whole experiment. Search and predict processes check the index on every request
(:class:`LiveExperiments`, the rules' mechanism): a started or stopped experiment is served on their
next request.
"""

from __future__ import annotations

import builtins
import secrets
import threading
import time
import uuid
from datetime import UTC, datetime

import orjson

from aisle.core.errors import Conflict, ErrorCode, NotFound
from aisle.core.storage import BlobNotFound, BlobStore
from aisle.core.storage.documents import VersionedDocuments
from aisle.core.storage.revisions import RevisionLog
from aisle.core.storage.signature import file_signature, read_object
from aisle.core.tenancy import check_tenant_name, tenant_scope
from aisle.experiments.model import Experiment, ExperimentBody, HistoryEntry, Status

ROOT = "experiments"
INDEX_PATH = f"{ROOT}/_index.json"


class ExperimentNotFound(NotFound):
    code = ErrorCode.EXPERIMENT_NOT_FOUND


class ExperimentVersionConflict(Conflict):
    code = ErrorCode.EXPERIMENT_VERSION_CONFLICT


class ExperimentStateConflict(Conflict):
    code = ErrorCode.EXPERIMENT_STATE_CONFLICT


def _now() -> datetime:
    return datetime.now(UTC)


class ExperimentStore(VersionedDocuments[Experiment]):
    """Experiments of one tenant (``scope``: the tenant-scoped store)."""

    model = Experiment

    def __init__(self, scope: BlobStore) -> None:
        super().__init__(RevisionLog(scope, ROOT))
        self.scope = scope

    def _not_found(self, doc_id: str) -> ExperimentNotFound:
        return ExperimentNotFound(f"experiment '{doc_id}' does not exist", details={"experimentId": doc_id})

    def _conflict(self, doc_id: str, given: int, current: int | None) -> ExperimentVersionConflict:
        return ExperimentVersionConflict(
            f"experiment '{doc_id}' is at version {current}, not {given}: re-read it and retry",
            details={"experimentId": doc_id, "givenVersion": given, "currentVersion": current},
        )

    def _written(self, doc_id: str) -> None:
        try:
            generation = int(orjson.loads(self.log.read(INDEX_PATH))["generation"])
        except (BlobNotFound, ValueError, KeyError, TypeError):
            generation = 0
        index = {"generation": generation + 1, "stamp": uuid.uuid4().hex, "experimentId": doc_id}
        self.scope.put(INDEX_PATH, orjson.dumps(index))

    def list(self) -> builtins.list[Experiment]:
        """Every experiment, newest first."""
        return sorted(self._live(), key=lambda e: (e.createdAt, e.id), reverse=True)

    def create(self, body: ExperimentBody, *, simulated: bool = False) -> Experiment:
        """Store a new draft experiment with a random id and salt."""
        now = _now()
        exp_id = uuid.uuid4().hex[:12]
        experiment = Experiment(
            **body.model_dump(),
            id=exp_id,
            version=1,
            salt=secrets.token_hex(8),
            createdAt=now,
            updatedAt=now,
            simulated=simulated,
            history=[HistoryEntry(action="created", at=now)],
        )
        if not self._write(exp_id, 1, experiment):  # pragma: no cover - 48 random bits
            raise self._conflict(exp_id, 0, 1)
        return experiment

    def replace(self, exp_id: str, body: ExperimentBody, version: int) -> Experiment:
        """Replace a draft's body. Raises ExperimentStateConflict (409) once it has started."""
        revision, current = self._current(exp_id, version)
        if current.status != "draft":
            raise ExperimentStateConflict(
                f"experiment '{exp_id}' is {current.status}: only a draft can be changed",
                details={"experimentId": exp_id, "status": current.status},
            )
        now = _now()
        history = [*current.history, HistoryEntry(action="replaced", at=now)]
        updated = Experiment.model_validate(
            {
                **current.model_dump(),
                **body.model_dump(),
                "version": version + 1,
                "updatedAt": now,
                "history": [h.model_dump() for h in history],
            }
        )
        return self._replace(exp_id, revision, updated, version)

    def transition(
        self,
        exp_id: str,
        action: str,
        to: Status,
        allowed: tuple[Status, ...],
        *,
        variant: str | None = None,
        at: datetime | None = None,
        version: int | None = None,
    ) -> Experiment:
        """Move the experiment to status ``to`` (from one of ``allowed``), recording ``action``.

        Raises:
            ExperimentNotFound (404); ExperimentStateConflict (409): not in an ``allowed`` status;
            ExperimentVersionConflict (409): ``version`` stale or a concurrent writer won.
        """
        revision, current = self._current(exp_id, version)
        if current.status not in allowed:
            raise ExperimentStateConflict(
                f"experiment '{exp_id}' is {current.status}: cannot {action.removesuffix('ed')} it",
                details={"experimentId": exp_id, "status": current.status},
            )
        at = at or _now()
        update: dict[str, object] = {
            "status": to,
            "version": current.version + 1,
            "updatedAt": at,
            "history": [*current.history, HistoryEntry(action=action, at=at, variant=variant)],
        }
        if to == "running":
            update["startedAt"] = at
        if to in ("stopped", "promoted") and current.stoppedAt is None:
            update["stoppedAt"] = at
        if variant is not None:
            update["promotedVariant"] = variant
        return self._replace(exp_id, revision, current.model_copy(update=update), current.version)


class LiveExperiments:
    """The running experiments of each tenant, reloaded when the tenant's experiment index changes.

    The freshness rule of :class:`~aisle.search.rules.book.RuleBooks`: on a local store a ``stat`` of
    the index per call (its bytes compared at least every ``verify_every`` seconds), on a remote one
    a GET of the index (about 100 bytes).
    """

    def __init__(self, store: BlobStore, verify_every: float = 1.0) -> None:
        self.store = store
        self.verify_every = verify_every
        self._held: dict[str, tuple[object, float, bytes | None, tuple[Experiment, ...]]] = {}
        self._lock = threading.Lock()

    def entry_count(self) -> int:
        return len(self._held)

    def running(self, tenant: str) -> tuple[Experiment, ...]:
        """The tenant's running experiments, oldest first. Raises BadRequest for a bad tenant name."""
        now = time.monotonic()
        path = f"{check_tenant_name(tenant)}/{INDEX_PATH}"
        held = self._held.get(tenant)
        local = self.store.local_path(path)
        signature = file_signature(local)
        fresh = held is not None and held[0] == signature and now - held[1] < self.verify_every
        if local is not None and held is not None and fresh:
            return held[3]
        try:
            content: bytes | None = read_object(self.store, path)
        except BlobNotFound:
            content = None
        if held is not None and held[2] == content:
            self._held[tenant] = (signature, now, content, held[3])
            return held[3]
        with self._lock:
            running: tuple[Experiment, ...] = ()
            if content is not None:  # the index is read first: a change meanwhile reloads next call
                found = ExperimentStore(tenant_scope(self.store, tenant)).list()
                running = tuple(
                    sorted((e for e in found if e.status == "running"), key=lambda e: e.createdAt)
                )
            self._held[tenant] = (signature, now, content, running)
            return running
