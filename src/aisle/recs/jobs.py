"""Persistent asynchronous jobs in object storage, run exactly once.

The runner knows no job kind itself: each process hands it a handler per kind. The edit service's
runner gets recs' own (``deploy``, ``undeploy``: :mod:`aisle.recs.deployments`) and the ones the
behaviour engine hands it (``train_ranker``, ``refresh_popularity``:
:meth:`aisle.behaviour.engine.BehaviourEngine.job_handlers`), which are not recs' work.

Layout in the tenant's scope::

    jobs/<job_id>.json               the Job document (status, percent, message, result)
    jobs/pending/<job_id>            marker of an unfinished job; removed when it ends
    jobs/claims/<job_id>/<attempt>   created with put_if_absent: whoever creates it runs the attempt
    jobs/heartbeats/<job_id>         last sign of life of the running attempt

Every edit replica runs one :class:`JobRunner`. Two replicas racing for a job both try to create
``claims/<job_id>/1``; object storage lets exactly one succeed, so the job runs once. A job that
was accepted but not finished when its service stopped is found again through its pending marker
after a restart; an attempt whose heartbeat is older than ``lease_s`` (its process died) is taken
over as attempt 2 (up to :data:`MAX_ATTEMPTS`), so every handler must be idempotent.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import orjson
from pydantic import BaseModel, Field

from aisle.core.errors import AisleError, ErrorCode, NotFound, Unavailable
from aisle.core.storage import BlobNotFound, BlobStore, PrefixBlobStore
from aisle.core.validation import is_resource_id

log = logging.getLogger("aisle.jobs")
MAX_ATTEMPTS = 3


class JobNotFound(NotFound):
    code = ErrorCode.JOB_NOT_FOUND


class JobStatus(StrEnum):
    """Job states of the interface spec ("States and transitions")."""

    accepted = "accepted"
    in_progress = "in_progress"
    completed = "completed"
    failed = "failed"


class Job(BaseModel):
    """One asynchronous job; ``percent`` is progress in 0..100."""

    jobId: str
    tenant: str
    kind: str = Field(
        description="What the job does: deploy, undeploy, train_ranker (the search ranker) or "
        "refresh_popularity (product popularity and trending for recommendations)."
    )
    modelId: str | None = None
    params: dict[str, Any] = Field(
        default_factory=dict, description="What the job was asked for (e.g. train_ranker's deploy mode)."
    )
    status: JobStatus = JobStatus.accepted
    percent: int = 0
    message: str = "accepted"
    attempt: int = 0
    worker: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    createdAt: datetime = Field(default_factory=lambda: datetime.now(UTC))
    updatedAt: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @property
    def finished(self) -> bool:
        return self.status in (JobStatus.completed, JobStatus.failed)


Progress = Callable[[int, str], None]
JobHandler = Callable[[PrefixBlobStore, Job, Progress], dict[str, Any] | None]
"""Runs one job in the tenant ``scope``; reports ``progress(percent, message)``; returns the result.
Raises anything to fail the job (an AisleError's code and message are kept)."""


class JobStore:
    """The jobs of one tenant."""

    def __init__(self, scope: PrefixBlobStore, tenant: str) -> None:
        self.scope = scope
        self.tenant = tenant

    def submit(self, kind: str, model_id: str | None = None, params: dict[str, Any] | None = None) -> Job:
        """Persist a new accepted job (with its request ``params``) and its pending marker."""
        job = Job(
            jobId=f"job-{secrets.token_hex(8)}",
            tenant=self.tenant,
            kind=kind,
            modelId=model_id,
            params=params or {},
        )
        self.save(job)
        self.scope.put(f"jobs/pending/{job.jobId}", b"")
        return job

    def get(self, job_id: str) -> Job:
        """Raises :class:`JobNotFound` (also for an id no job can have)."""
        try:
            if not is_resource_id(job_id):
                raise BlobNotFound(job_id)
            return Job.model_validate_json(self.scope.get(f"jobs/{job_id}.json"))
        except BlobNotFound as exc:
            raise JobNotFound(f"job '{job_id}' does not exist", details={"jobId": job_id}) from exc

    def save(self, job: Job) -> None:
        job.updatedAt = datetime.now(UTC)
        self.scope.put(f"jobs/{job.jobId}.json", job.model_dump_json().encode())

    def pending(self) -> list[str]:
        return [p.rsplit("/", 1)[-1] for p in self.scope.list("jobs/pending/")]

    def unfinished(self) -> list[Job]:
        """The jobs not ended yet (accepted or in progress), oldest first; one that ended while they were
        listed is left out."""
        jobs = []
        for job_id in self.pending():
            try:
                job = self.get(job_id)
            except JobNotFound:
                continue
            if not job.finished:
                jobs.append(job)
        return sorted(jobs, key=lambda j: (j.createdAt, j.jobId))


class JobRunner:
    """Claims and runs the pending jobs of every tenant, in a background thread.

    Args:
        store: the root object store (tenants are its top-level folders).
        tenants: returns the tenant names to scan.
        handlers: job kind -> handler.
        poll_s: seconds between scans for jobs submitted through other replicas.
        lease_s: an attempt silent for longer than this is presumed dead and taken over.
    """

    def __init__(
        self,
        store: BlobStore,
        tenants: Callable[[], list[str]],
        handlers: dict[str, JobHandler],
        *,
        poll_s: float = 1.0,
        lease_s: float = 30.0,
    ) -> None:
        self.store = store
        self.tenants = tenants
        self.handlers = handlers
        self.poll_s = poll_s
        self.lease_s = lease_s
        self.worker_id = f"worker-{secrets.token_hex(4)}"
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="aisle-jobs", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def wake(self) -> None:
        """Scan now (called right after a local submit)."""
        self._wake.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.run_pending()
            except Unavailable as exc:  # storage down: scan again on the next pass
                log.warning("job scan skipped: %s", exc.message)
            except Exception:  # keep the runner alive; the job itself records its failure
                log.exception("job scan failed")
            self._wake.wait(self.poll_s)
            self._wake.clear()

    def run_pending(self) -> int:
        """Claim and run every runnable pending job once. Returns how many this runner ran."""
        ran = 0
        for tenant in self.tenants():
            jobs = JobStore(PrefixBlobStore(self.store, tenant), tenant)
            for job_id in jobs.pending():
                if self._stop.is_set():
                    return ran
                ran += self._try_run(jobs, job_id)
        return ran

    def _try_run(self, jobs: JobStore, job_id: str) -> int:
        scope = jobs.scope
        try:
            job = jobs.get(job_id)
        except JobNotFound:
            scope.delete(f"jobs/pending/{job_id}")
            return 0
        if job.finished:
            scope.delete(f"jobs/pending/{job_id}")
            return 0
        attempts = [int(p.rsplit("/", 1)[-1]) for p in scope.list(f"jobs/claims/{job_id}/")]
        attempt = max(attempts, default=0) + 1
        if attempts and not self._stale(scope, job_id, attempt - 1):
            return 0
        if attempt > MAX_ATTEMPTS:
            if scope.put_if_absent(f"jobs/claims/{job_id}/{attempt}", self._claim_doc()):
                self._finish(
                    jobs, job, None, AisleError(f"gave up after {MAX_ATTEMPTS} interrupted attempts")
                )
            return 0
        if not scope.put_if_absent(f"jobs/claims/{job_id}/{attempt}", self._claim_doc()):
            return 0  # another replica won this attempt
        self._run(jobs, job, attempt)
        return 1

    def _stale(self, scope: PrefixBlobStore, job_id: str, attempt: int) -> bool:
        """True when neither the claim of ``attempt`` nor a heartbeat is younger than the lease."""
        last = 0.0
        for path in (f"jobs/claims/{job_id}/{attempt}", f"jobs/heartbeats/{job_id}"):
            try:
                last = max(last, float(orjson.loads(scope.get(path))["at"]))
            except (BlobNotFound, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
                continue
        return time.time() - last > self.lease_s

    def _claim_doc(self) -> bytes:
        return orjson.dumps({"at": time.time(), "worker": self.worker_id})

    def _beat(self, scope: PrefixBlobStore, job_id: str) -> None:
        scope.put(f"jobs/heartbeats/{job_id}", self._claim_doc())

    def _run(self, jobs: JobStore, job: Job, attempt: int) -> None:
        scope = jobs.scope
        self._beat(scope, job.jobId)
        job.attempt, job.worker = attempt, self.worker_id
        job.status, job.percent = JobStatus.in_progress, max(job.percent, 1)
        job.message = "started" if attempt == 1 else f"resumed (attempt {attempt}) after its worker stopped"
        jobs.save(job)
        stop_beating = threading.Event()

        def beat_loop() -> None:
            while not stop_beating.wait(self.lease_s / 3):
                self._beat(scope, job.jobId)

        beater = threading.Thread(target=beat_loop, daemon=True)
        beater.start()

        def progress(percent: int, message: str) -> None:
            job.percent = max(job.percent, min(99, int(percent)))
            job.message = message
            jobs.save(job)

        handler = self.handlers.get(job.kind)
        try:
            if handler is None:
                raise AisleError(f"no handler for job kind '{job.kind}'", code=ErrorCode.JOB_KIND_UNKNOWN)
            result = handler(scope, job, progress)
        except Exception as exc:
            self._finish(jobs, job, None, exc)
        else:
            self._finish(jobs, job, result, None)
        finally:
            stop_beating.set()
            beater.join()

    def _finish(self, jobs: JobStore, job: Job, result: dict[str, Any] | None, exc: Exception | None) -> None:
        if exc is None:
            job.status, job.percent, job.message, job.result = JobStatus.completed, 100, "completed", result
        else:
            if not isinstance(exc, AisleError):
                log.exception("job %s failed", job.jobId, exc_info=exc)
            err = (
                exc.to_dict()
                if isinstance(exc, AisleError)
                else {"code": ErrorCode.JOB_FAILED, "message": str(exc)}
            )
            job.status, job.message, job.error = JobStatus.failed, err["message"], err
        jobs.save(job)
        jobs.scope.delete(f"jobs/pending/{job.jobId}")
