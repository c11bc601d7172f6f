"""``aisle serve`` (cli/serve.py): search with two uvicorn workers, one /metrics summing both."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from tests.support.auth import free_port
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow  # starts `aisle serve` and its workers as processes

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


def settled_health_count(url: str) -> float:
    """:func:`health_count` once two scrapes 0.2 s apart agree: a worker observes a request after its
    response is sent, so the client's last answered request may not be counted yet (seen in CI: 41 for
    40 when the readiness poll's last /health was counted after the first scrape)."""
    last = health_count(url)
    for _ in range(50):
        time.sleep(0.2)
        now = health_count(url)
        if now == last:
            return now
        last = now
    raise AssertionError(f"the /health count kept moving: {last}")


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
        # ready once /metrics answers, not /health: a readiness poll the client gave up on (1 s, a worker
        # still starting on a loaded machine) is still answered later and was counted (CI: 43 for 40)
        wait_until(lambda: answers(proc, url, "/metrics"), "aisle serve answers", every=0.2)
        assert not stale.exists()  # emptied at start: an earlier run's counts are not summed
        before = settled_health_count(url)
        for _ in range(REQUESTS):  # a new connection each: the kernel spreads them over the workers
            httpx.get(f"{url}/health", headers={"connection": "close"}, timeout=10)
        counts = {settled_health_count(url) - before} | {health_count(url) - before for _ in range(6)}
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
        builds = wait_until(lambda: failed_builds(proc, url), "every build has failed", every=0.3)
        # the builder exits once its builds ended, and serve says so on its next look; it keeps serving
        stdout = proc.stdout
        assert stdout is not None
        said: list[bytes] = []

        def reported() -> bool:
            said.append(stdout.readline())
            return b"background builds ended (exit code" in said[-1]  # serve's line, not the builder's

        wait_until(reported, "serve reports the builder's end", every=0)
        assert not builder_running(proc.pid)
        assert proc.poll() is None and httpx.get(f"{url}/health", timeout=5).status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=30)
    assert set(builds) == {"fashion", "homedepot", "yoochoose"}  # yoochoose: its simulated traffic
    reasons = {b["message"] for bs in builds.values() for b in bs}
    assert reasons == {f"tenant '{t}' does not exist" for t in ("fashion", "homedepot", "yoochoose")}
    out = b"".join([*said, rest]).decode()
    assert "aisle status" in out and "background builds ended (exit code 1)" in out, out


def sockets_by_pid(pids: list[int], port: int, state: str) -> dict[int, set[str]]:
    """The TCP sockets on local ``port`` in ``state`` (``01`` established, ``0A`` listening) that each
    process holds, as socket inodes (Linux /proc/net/tcp and /proc/<pid>/fd)."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == state:
            inodes.add(fields[9])
    held: dict[int, set[str]] = {pid: set() for pid in pids}
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:[") and target[8:-1] in inodes:
                held[pid].add(target[8:-1])
    return held


def start_serve(tmp_path: Path, port: int, workers: int, grace_s: float = 10.0) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "AISLE_STORAGE_URL": f"file://{tmp_path / 'bucket'}",
        "AISLE_DATA_DIR": str(tmp_path / "data"),
        "AISLE_AUTH": "off",
        "AISLE_SEARCH_PORT": str(port),
    }
    cmd = [sys.executable, "-m", "aisle.cli", "serve", "--only", "search", "--workers", str(workers)]
    cmd += ["--start-grace", str(grace_s)]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def wait_healthy(proc: subprocess.Popen[bytes], url: str, workers: int) -> list[int]:
    """The worker pids once ``workers`` of them run and the service answers."""

    def started() -> list[int] | None:
        children = [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]
        return children if len(children) == workers and answers(proc, url) else None

    return wait_until(started, f"{workers} workers of aisle serve answer", every=0.2)


def answers(proc: subprocess.Popen[bytes], url: str, route: str = "/health") -> bool:
    """Whether ``url`` answers ``GET route`` with 200; fails with serve's stderr when it exited."""
    assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
    try:
        return httpx.get(f"{url}{route}", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def failed_builds(proc: subprocess.Popen[bytes], url: str) -> dict[str, Any] | None:
    """``GET /health``'s builds once there is one and every one has failed, else None."""
    assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
    try:
        builds: dict[str, Any] = httpx.get(f"{url}/health", timeout=1).json()["builds"]
    except httpx.HTTPError:
        return None
    return builds if builds and all(b["state"] == "failed" for bs in builds.values() for b in bs) else None


def test_a_burst_of_keep_alive_connections_reaches_every_worker(tmp_path: Path) -> None:
    """Each worker has its own SO_REUSEPORT socket: 32 connections opened at once are spread by the
    kernel (with one shared socket, one worker could accept them all); a killed worker is replaced."""
    port = free_port()
    proc = start_serve(tmp_path, port, workers=2, grace_s=0)  # any exit after start-up: started again
    url = f"http://127.0.0.1:{port}"
    try:
        workers = wait_healthy(proc, url, 2)
        listening = sockets_by_pid(workers, port, "0A")
        assert all(len(s) == 1 for s in listening.values()), listening  # each worker its own socket
        assert len(set.union(*listening.values())) == 2, listening  # (uvicorn --workers: one shared)
        # 32 connections queued at once (the kernel completes each handshake before any worker
        # accepts), then one request on each; they stay open (keep-alive) while counted
        conns = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(32)]
        try:
            for conn in conns:
                conn.sendall(b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
            for conn in conns:
                assert conn.recv(65536).startswith(b"HTTP/1.1 200")
            held = {pid: len(s) for pid, s in sockets_by_pid(workers, port, "01").items()}
        finally:
            for conn in conns:
                conn.close()
        assert sum(held.values()) == 32 and all(n > 0 for n in held.values()), held
        os.kill(workers[0], signal.SIGKILL)

        def replaced() -> bool:
            assert proc.poll() is None, "aisle serve exited"
            children = {
                int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
            }
            return len(children) == 2 and workers[0] not in children

        wait_until(replaced, "the killed worker is replaced", every=0.2)
        assert wait_healthy(proc, url, 2)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    assert "a worker exited with code -9; starting another" in stderr.decode()


def test_serve_refuses_a_port_in_use(tmp_path: Path) -> None:
    """A port someone listens on is refused before anything starts (SO_REUSEPORT would share it)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        proc = start_serve(tmp_path, taken.getsockname()[1], workers=1)
        _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert "in use (another `aisle serve`?): search (127.0.0.1:" in stderr.decode()
