"""A search replica stopped and restarted behind HAProxy under load (``tests.support.failover``).

Shared by ``tests/deploy/test_failover.py`` (asserts the outcome) and ``bench/bench_failover.py``
(prints the figures). :func:`search_cluster` starts two search replicas (``uvicorn --factory
aisle.services.search.app:create_app``, as ``aisle serve`` does, one worker each) over one bucket, each
with its own ``AISLE_DATA_DIR``, and HAProxy in front (:mod:`tests.support.haproxy`). :func:`run_failover`
runs a bounded load (``clients`` concurrent keep-alive ``GET /search`` through HAProxy), stops one
replica (SIGKILL, or SIGTERM for a graceful stop), restarts it a few seconds later and tells each
answer's phase:

* ``before``: started and answered before the stop;
* ``unnoticed``: in flight at the stop, or started after it but before HAProxy marked the server
  ``DOWN`` (its health check has not noticed yet: only retries save these);
* ``down``: started while HAProxy had the server ``DOWN`` and it was not restarted yet;
* ``restarting``: started after the restart, before HAProxy marked the server ``UP`` again;
* ``up``: started after that.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import httpx
import polars as pl
from tests.support.auth import AuthKit, free_port
from tests.support.haproxy import HAProxy
from tests.support.recs import write_tenant

from aisle.core.storage import open_blob_store

TENANT = "shop"
PHASES = ("before", "unnoticed", "down", "restarting", "up")
WORDS = [
    *("red", "blue", "green", "linen", "wool", "denim"),
    *("shirt", "dress", "jacket", "boots", "scarf", "bag"),
]


def demo_products(n: int) -> pl.DataFrame:
    """``n`` products whose titles combine :data:`WORDS` (every query word matches some of them)."""
    k = len(WORDS)
    titles = [f"{WORDS[i % k]} {WORDS[(i // k) % k]} {WORDS[(i // (k * k)) % k]} {i}" for i in range(n)]
    return pl.DataFrame(
        {"id": [f"p{i}" for i in range(n)], "title": titles, "brand": [f"b{i % 7}" for i in range(n)]}
    )


class Replica:
    """One search replica: ``uvicorn`` in a child process on a fixed loopback port (kept on restart).

    Each start uses an empty ``data_dir`` (a new pod's ``emptyDir``): the replica rebuilds its index from
    the bucket, which shows that directory is a cache.
    """

    def __init__(self, name: str, env: dict[str, str], data_dir: Path) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data_dir = data_dir
        self.env = {**os.environ, **env, "AISLE_DATA_DIR": str(data_dir)}
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        shutil.rmtree(self.data_dir, ignore_errors=True)
        cmd = [
            sys.executable, "-m", "uvicorn", "--factory", "aisle.services.search.app:create_app",
            "--host", "127.0.0.1", "--port", str(self.port), "--workers", "1",
            "--no-access-log", "--log-level", "warning",
        ]  # fmt: skip
        self.proc = subprocess.Popen(cmd, env=self.env)

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        """Wait until ``GET /health`` answers 200 (uvicorn binds after the app's warm-up)."""
        assert self.proc is not None
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/health", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None:
                raise RuntimeError(f"replica {self.name} exited with {self.proc.returncode}")
            time.sleep(0.1)
        raise TimeoutError(f"replica {self.name} did not become ready")

    def signal(self, sig: signal.Signals) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def wait_exit(self, timeout_s: float = 30.0) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout=timeout_s)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@dataclass
class Answer:
    """One request: start and end (``time.monotonic()``), outcome (``"200"``, another status, or the
    transport error's class name) and the server HAProxy named in ``X-Served-By``."""

    start: float
    end: float
    outcome: str
    server: str = ""
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome == "200"


class Load:
    """``clients`` coroutines on a thread of their own, each sending ``GET`` requests back to back
    (pausing ``pause_s`` between two) over its own keep-alive connection, until :meth:`stop`."""

    def __init__(
        self, url: str, paths: Sequence[str], headers: dict[str, str], clients: int, pause_s: float = 0.0
    ) -> None:
        self.url, self.paths, self.headers, self.clients, self.pause_s = url, paths, headers, clients, pause_s
        self.answers: list[Answer] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), name="load", daemon=True)

    async def _client(self, offset: int) -> None:
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        client = httpx.AsyncClient(base_url=self.url, headers=self.headers, limits=limits, timeout=10)
        async with client as http:
            i = offset
            while not self._stop.is_set():
                path = self.paths[i % len(self.paths)]
                i += self.clients
                start = time.monotonic()
                try:
                    response = await http.get(path)
                    await response.aread()
                    answer = Answer(start, time.monotonic(), str(response.status_code))
                    answer.server = response.headers.get("x-served-by", "")
                    if not answer.ok:
                        answer.detail = response.text[:300]
                except httpx.HTTPError as exc:
                    answer = Answer(start, time.monotonic(), type(exc).__name__, detail=str(exc))
                self.answers.append(answer)
                if self.pause_s:
                    await asyncio.sleep(self.pause_s)

    async def _run(self) -> None:
        await asyncio.gather(*(self._client(i) for i in range(self.clients)))

    def start(self) -> Load:
        self._thread.start()
        return self

    def stop(self) -> list[Answer]:
        self._stop.set()
        self._thread.join(timeout=30)
        return self.answers


@dataclass
class FailoverReport:
    """Answers per phase (outcome counts and serving replica counts) and the timeline, in seconds from
    the stop: ``down_s`` when HAProxy marked the server down, ``restart_s`` when it was started again,
    ``up_s`` when HAProxy marked it up; ``stats`` is HAProxy's ``show stat`` row per server at the
    end (``stats_before`` at the start); ``failures`` each failed answer with its phase; ``latencies_ms``
    each answer's time per phase, failed ones included."""

    how: str
    outcomes: dict[str, Counter[str]] = field(default_factory=dict)
    served_by: dict[str, Counter[str]] = field(default_factory=dict)
    down_s: float = 0.0
    restart_s: float = 0.0
    up_s: float = 0.0
    stats: dict[str, dict[str, str]] = field(default_factory=dict)
    stats_before: dict[str, dict[str, str]] = field(default_factory=dict)
    failures: list[tuple[str, Answer]] = field(default_factory=list)
    latencies_ms: dict[str, list[float]] = field(default_factory=dict)

    def failed(self, phase: str) -> int:
        return sum(n for outcome, n in self.outcomes[phase].items() if outcome != "200")

    def total(self, phase: str) -> int:
        return sum(self.outcomes[phase].values())

    def counted(self, server: str, counter: str) -> int:
        """How much HAProxy's ``counter`` of ``server`` (``wretr``, ``wredis``, ``stot``...) grew during
        the run."""
        return int(self.stats[server][counter] or 0) - int(self.stats_before[server][counter] or 0)


def phase_of(answer: Answer, stop: float, down: float, restart: float, up: float) -> str:
    """The answer's phase (module docstring): by its start, except that one in flight at the stop is
    ``unnoticed`` (the stop hit it)."""
    if answer.end < stop:
        return "before"
    if answer.start < down:
        return "unnoticed"
    if answer.start < restart:
        return "down"
    return "restarting" if answer.start < up else "up"


@dataclass
class SearchCluster:
    """Two (or more) search replicas behind HAProxy, and the load's request paths and headers."""

    haproxy: HAProxy
    replicas: list[Replica]
    paths: list[str]
    headers: dict[str, str]


@contextmanager
def search_cluster(
    directory: Path,
    *,
    products: int = 200,
    replicas: int = 2,
    check_inter_ms: int = 500,
    retry: bool = True,
) -> Iterator[SearchCluster]:
    """A bucket (``file://``) holding tenant ``shop`` with ``products`` products and a signing key,
    ``replicas`` search replicas over it (auth on), and HAProxy on a free port (``retry``: see
    :func:`~tests.support.haproxy.haproxy_config`); all stopped on exit."""
    directory.mkdir(parents=True, exist_ok=True)
    bucket = f"file://{directory / 'bucket'}"
    store = open_blob_store(bucket)
    write_tenant(store, TENANT, demo_products(products))
    kit = AuthKit(store, auth_url="http://testserver")
    env = {"AISLE_STORAGE_URL": bucket, "AISLE_AUTH": "on", "AISLE_AUTH_URL": kit.auth_url}
    with ExitStack() as stack:
        started = [Replica(f"s{i + 1}", env, directory / f"data-s{i + 1}") for i in range(replicas)]
        for replica in started:
            stack.callback(replica.stop)
            replica.start()
        for replica in started:
            replica.wait_ready()
        servers = {r.name: r.port for r in started}
        haproxy = HAProxy(directory, free_port(), servers, check_inter_ms=check_inter_ms, retry=retry)
        stack.callback(haproxy.stop)
        haproxy.start()
        for replica in started:
            haproxy.wait_status(replica.name, "UP")
        paths = [f"/search?tenant={TENANT}&q={w}&size=10" for w in WORDS]
        headers = {"Authorization": f"Bearer {kit.token([TENANT], ttl=3600)}"}
        yield SearchCluster(haproxy, started, paths, headers)


def run_failover(
    cluster: SearchCluster,
    how: Literal["kill", "term"],
    *,
    clients: int = 8,
    pause_s: float = 0.0,
    warm_s: float = 2.0,
    down_s: float = 3.0,
    after_s: float = 3.0,
) -> FailoverReport:
    """Under load, stop the first replica (``kill``: SIGKILL; ``term``: SIGTERM, uvicorn drains), wait
    until HAProxy marks it ``DOWN``, restart it ``down_s`` seconds after the stop, wait until HAProxy
    marks it ``UP``, and keep the load ``after_s`` seconds more.

    Raises:
        TimeoutError: HAProxy did not mark the replica down (30 s) or up again (120 s).
    """
    victim = cluster.replicas[0]
    stats_before = cluster.haproxy.stats()
    load = Load(cluster.haproxy.url, cluster.paths, cluster.headers, clients, pause_s).start()
    try:
        time.sleep(warm_s)
        stop = time.monotonic()
        victim.signal(signal.SIGKILL if how == "kill" else signal.SIGTERM)
        down = cluster.haproxy.wait_status(victim.name, "DOWN")
        victim.wait_exit()
        time.sleep(max(0.0, stop + down_s - time.monotonic()))
        restart = time.monotonic()
        victim.start()
        up = cluster.haproxy.wait_status(victim.name, "UP", timeout_s=120)
        time.sleep(after_s)
    finally:
        answers = load.stop()
    report = FailoverReport(how, down_s=down - stop, restart_s=restart - stop, up_s=up - stop)
    report.outcomes = {p: Counter() for p in PHASES}
    report.served_by = {p: Counter() for p in PHASES}
    report.latencies_ms = {p: [] for p in PHASES}
    report.stats_before = stats_before
    for answer in answers:
        phase = phase_of(answer, stop, down, restart, up)
        report.outcomes[phase][answer.outcome] += 1
        report.latencies_ms[phase].append((answer.end - answer.start) * 1000)
        if answer.ok:
            report.served_by[phase][answer.server] += 1
        else:
            report.failures.append((phase, answer))
    report.stats = cluster.haproxy.stats()
    return report
