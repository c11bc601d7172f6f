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
