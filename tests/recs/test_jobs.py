"""Persistent jobs: lifecycle, restart survival, exactly-once with two runners, stale takeover."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from aisle.core.errors import Conflict
from aisle.core.storage import BlobStore, PrefixBlobStore
from aisle.recs.jobs import Job, JobRunner, JobStatus, JobStore, Progress

TENANT = "shop"


def store_of(blob_store: BlobStore) -> JobStore:
    return JobStore(PrefixBlobStore(blob_store, TENANT), TENANT)


def counting_handler(calls: list[str], delay: float = 0.0):
    def handler(scope: PrefixBlobStore, job: Job, progress: Progress) -> dict[str, Any]:
        progress(50, "half way")
        time.sleep(delay)
        calls.append(job.jobId)
        return {"ok": True}

    return handler


def test_job_goes_accepted_in_progress_completed(blob_store: BlobStore) -> None:
    jobs = store_of(blob_store)
    seen: list[tuple[JobStatus, int, str]] = []

    def handler(scope: PrefixBlobStore, job: Job, progress: Progress) -> dict[str, Any]:
        progress(40, "loading")
        current = jobs.get(job.jobId)
        seen.append((current.status, current.percent, current.message))
        return {"deployed": True}

    job = jobs.submit("deploy", "m1")
    assert jobs.get(job.jobId).status is JobStatus.accepted
    runner = JobRunner(blob_store, lambda: [TENANT], {"deploy": handler})
    assert runner.run_pending() == 1
    assert seen == [(JobStatus.in_progress, 40, "loading")]
    done = jobs.get(job.jobId)
    assert (done.status, done.percent, done.result) == (JobStatus.completed, 100, {"deployed": True})
    assert jobs.pending() == [] and runner.run_pending() == 0


def test_failure_keeps_the_error_code(blob_store: BlobStore) -> None:
    jobs = store_of(blob_store)

    def handler(scope: PrefixBlobStore, job: Job, progress: Progress) -> None:
        raise Conflict("model 'm1' is attached to containers: c1", code="model_in_use")

    job = jobs.submit("undeploy", "m1")
    JobRunner(blob_store, lambda: [TENANT], {"undeploy": handler}).run_pending()
    failed = jobs.get(job.jobId)
    assert failed.status is JobStatus.failed and failed.error and failed.error["code"] == "model_in_use"
    assert "c1" in failed.message


def test_a_job_accepted_before_a_restart_runs_after_it(blob_store: BlobStore) -> None:
    job = store_of(blob_store).submit("deploy", "m1")  # the service stops before running it
    calls: list[str] = []
    restarted = JobRunner(blob_store, lambda: [TENANT], {"deploy": counting_handler(calls)}, poll_s=0.05)
    restarted.start()
    try:
        deadline = time.time() + 5
        while (
            store_of(blob_store).get(job.jobId).status is not JobStatus.completed and time.time() < deadline
        ):
            time.sleep(0.02)
    finally:
        restarted.stop()
    assert calls == [job.jobId]


def test_two_replicas_run_each_job_exactly_once(blob_store: BlobStore) -> None:
    jobs = store_of(blob_store)
    submitted = [jobs.submit("deploy", f"m{i}").jobId for i in range(6)]
    calls: list[str] = []
    lock = threading.Lock()

    def handler(scope: PrefixBlobStore, job: Job, progress: Progress) -> None:
        time.sleep(0.02)
        with lock:
            calls.append(job.jobId)

    runners = [JobRunner(blob_store, lambda: [TENANT], {"deploy": handler}, poll_s=0.01) for _ in range(2)]
    for r in runners:
        r.start()
    try:
        deadline = time.time() + 10
        while len(calls) < 6 and time.time() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)
    finally:
        for r in runners:
            r.stop()
    assert sorted(calls) == sorted(submitted)
    assert all(jobs.get(j).status is JobStatus.completed for j in submitted)


def test_an_attempt_whose_worker_died_is_taken_over(blob_store: BlobStore) -> None:
    jobs = store_of(blob_store)
    job = jobs.submit("deploy", "m1")
    scope = jobs.scope
    claim = b'{"at": %f, "worker": "dead"}' % time.time()
    assert scope.put_if_absent(f"jobs/claims/{job.jobId}/1", claim)  # claimed, then its process died
    calls: list[str] = []
    runner = JobRunner(blob_store, lambda: [TENANT], {"deploy": counting_handler(calls)}, lease_s=0.3)
    assert runner.run_pending() == 0  # the claim is fresh: its worker may still be running
    time.sleep(0.4)
    assert runner.run_pending() == 1
    done = jobs.get(job.jobId)
    assert done.status is JobStatus.completed and done.attempt == 2


@pytest.mark.parametrize("kind", ["nope"])
def test_unknown_kind_fails_cleanly(blob_store: BlobStore, kind: str) -> None:
    jobs = store_of(blob_store)
    job = jobs.submit(kind)
    JobRunner(blob_store, lambda: [TENANT], {}).run_pending()
    assert jobs.get(job.jobId).status is JobStatus.failed
