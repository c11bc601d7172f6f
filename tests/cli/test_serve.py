"""``aisle serve`` (cli/serve.py): search with two uvicorn workers, one /metrics summing both."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families
from tests.support.auth import free_port

REQUESTS = 40


def health_count(url: str) -> float:
    """``/health`` requests in the latency histogram's _count, as one scrape reports them."""
    text = httpx.get(f"{url}/metrics", headers={"connection": "close"}, timeout=10).text
    return sum(
        s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "aisle_http_request_duration_seconds_count" and s.labels["route"] == "/health"
    )


def test_a_scrape_sums_every_worker(tmp_path: Path) -> None:
    port = free_port()
    multiproc = tmp_path / "multiproc"
    stale = multiproc / "search" / "counter_999999.db"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"left by an earlier run")
    env = {
        **os.environ,
        "AISLE_STORAGE_URL": f"file://{tmp_path / 'bucket'}",
        "AISLE_DATA_DIR": str(tmp_path / "data"),
        "AISLE_AUTH": "off",
        "AISLE_SEARCH_PORT": str(port),
        "PROMETHEUS_MULTIPROC_DIR": str(multiproc),
    }
    cmd = [sys.executable, "-m", "aisle.cli", "serve", "--only", "search", "--workers", "2"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "aisle serve did not start"
            time.sleep(0.2)
        assert not stale.exists()  # emptied at start: an earlier run's counts are not summed
        before = health_count(url)
        for _ in range(REQUESTS):  # a new connection each: the kernel spreads them over the workers
            httpx.get(f"{url}/health", headers={"connection": "close"}, timeout=10)
        counts = {health_count(url) - before for _ in range(6)}
        worker_files = list((multiproc / "search").glob("histogram_*.db"))
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    assert counts == {REQUESTS}  # every scrape, whichever worker answers it, counts every request
    assert len(worker_files) == 2
    # the log format names each line's request, "-" outside one (this warning is logged at start-up)
    assert re.search(r"WARNING aisle\.auth \[-\] AISLE_AUTH=off", stderr.decode()), stderr.decode()[-2000:]


def builder_running(pid: int) -> bool:
    """Whether the process ``pid`` has an ``aisle demo --heavy`` child (Linux /proc)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    for child in children:
        try:
            if b"--heavy" in Path(f"/proc/{child}/cmdline").read_bytes():
                return True
        except OSError:  # exited meanwhile
            continue
    return False


def test_serve_starts_the_background_builder_and_outlives_it(tmp_path: Path) -> None:
    """``--build-demo``: the builder runs beside the services; a build that cannot run (no demo tenant
    in an empty bucket) is reported as failed with its reason in /health, and the services go on."""
    port = free_port()
    env = {
        **os.environ,
        "AISLE_STORAGE_URL": f"file://{tmp_path / 'bucket'}",
        "AISLE_DATA_DIR": str(tmp_path / "data"),
        "AISLE_AUTH": "off",
        "AISLE_SEARCH_PORT": str(port),
    }
    cmd = [
        sys.executable,
        "-m",
        "aisle.cli",
        "serve",
        "--only",
        "search",
        "--build-demo",
        str(tmp_path / "none"),
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            try:
                builds = httpx.get(f"{url}/health", timeout=1).json()["builds"]
                if builds and all(b["state"] == "failed" for bs in builds.values() for b in bs):
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the builds did not end"
            time.sleep(0.3)
        while builder_running(proc.pid):  # it exits once its builds ended; serve keeps serving
            assert time.monotonic() < deadline, "the builder did not exit"
            time.sleep(0.3)
        time.sleep(1.0)  # serve notices on its next poll (every 0.5 s)
        assert proc.poll() is None and httpx.get(f"{url}/health", timeout=5).status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        stdout, _ = proc.communicate(timeout=30)
    assert set(builds) == {"fashion", "homedepot"}
    reasons = {b["message"] for bs in builds.values() for b in bs}
    assert reasons == {"tenant 'fashion' does not exist", "tenant 'homedepot' does not exist"}
    out = stdout.decode()
    assert "aisle status" in out and "background builds ended (exit code 1)" in out, out
