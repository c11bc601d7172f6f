"""Waiting for an edit-service job through its HTTP API (``GET /jobs/{jobId}``)."""

from __future__ import annotations

import time
from typing import Any

from fastapi.testclient import TestClient


def finished_job(client: TestClient, tenant: str, job_id: str, *, polls: int = 600) -> dict[str, Any]:
    """The job's last state once ``completed`` or ``failed``, polling every 50 ms.

    Raises:
        AssertionError: the job had not finished after ``polls`` polls (30 s by default).
    """
    job: dict[str, Any] = {}
    for _ in range(polls):
        job = client.get(f"/jobs/{job_id}", params={"tenant": tenant}).json()
        if job["status"] in ("completed", "failed"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish: {job}")
