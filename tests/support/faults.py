"""Real servers to break, and load to run while they break (``from tests.support.faults import ...``).

:class:`RedisServer` is a ``redis-server`` of its own (a free port, a temp dir) that a test kills with
SIGKILL and starts again on the same port and directory. :class:`Load` runs a request function in a
bounded loop on a thread and records each answer with the fault phase it started in, so a test or a
benchmark can count failed requests before, during and after a fault.
"""

from __future__ import annotations

import itertools
import logging
import secrets
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import redis
from tests.support.auth import free_port

from aisle.core.config import Settings

REDIS_SERVER = shutil.which("redis-server")
"""The ``redis-server`` binary, or None when the machine has none."""


class RedisServer:
    """``redis-server`` on 127.0.0.1:``port`` persisting to ``directory``.

    Started with ``appendonly yes`` and ``appendfsync always``: every write is in the append-only file
    before Redis acknowledges it, so a SIGKILL loses no acknowledged write and a restart on the same
    directory reads them all back (the durability production needs for the same promise). With
    ``appendfsync`` ``everysec`` or ``no`` for comparison; None: no append-only file and no snapshots
    (a restart starts empty).
    """

    def __init__(
        self, directory: Path, port: int | None = None, *, appendfsync: str | None = "always"
    ) -> None:
        if REDIS_SERVER is None:
            raise RuntimeError("redis-server is not installed")
        self.appendfsync = appendfsync
        self.directory = directory
        self.directory.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout_s: float = 10.0) -> None:
        """Start (or restart) the server and wait until it answers PING with its data loaded."""
        command = [
            str(REDIS_SERVER),
            "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory),
            "--appendonly", "no" if self.appendfsync is None else "yes",
            "--appendfsync", self.appendfsync or "always", "--save", "",
            "--logfile", str(self.directory / "redis.log"),
        ]  # fmt: skip
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(port=self.port, socket_connect_timeout=0.2, socket_timeout=0.5)
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if client.ping():  # answers only once the append-only file is loaded
                    break
            except redis.RedisError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start on port {self.port}") from None
                time.sleep(0.02)
        client.close()

    def kill(self) -> None:
        """SIGKILL: no shutdown, no final save (what a crash or an OOM kill does)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
        self.proc = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        self.proc = None


class S3Server:
    """moto's S3 server on a fixed port of 127.0.0.1 that can be stopped and started again.

    moto keeps objects in this process's memory, shared by every server of the process: a server
    started again on the same port serves the objects written before the stop, as a real server would
    from its disk (that part of a restart is simulated).
    """

    def __init__(self) -> None:
        self.port = free_port()
        self.server: Any = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one log line per S3 request otherwise

        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self.server.start()

    def stop(self) -> None:
        """Stop serving; the listening socket is closed, so new connections are refused."""
        self.server.stop()

    def settings(self, data_dir: Path, **overrides: Any) -> Settings:
        """Settings of a service on a new bucket of this server (auth off; storage operations bounded to
        2 s, so a test never waits obstore's default minutes)."""
        return Settings(
            auth="off",
            storage_url=f"s3://{self.bucket()}",
            s3_endpoint=self.url,
            s3_access_key_id="test",
            s3_secret_access_key="test",
            storage_timeout_seconds=2.0,
            data_dir=data_dir,
            **overrides,
        )

    def bucket(self) -> str:
        """A new bucket (credentials ``test``/``test``)."""
        import boto3

        name = f"aisle-{secrets.token_hex(6)}"
        boto3.client(
            "s3", endpoint_url=self.url, region_name="us-east-1", aws_access_key_id="test",
            aws_secret_access_key="test",
        ).create_bucket(Bucket=name)  # fmt: skip
        return name


class Phase:
    """The fault phase a test is in (``before``, ``during``, ``after``), read by the load threads."""

    def __init__(self) -> None:
        self.name = "before"
        self.changed = time.monotonic()

    def set(self, name: str) -> None:
        self.name = name
        self.changed = time.monotonic()


@dataclass
class Answer:
    """One request: its phase (``during``; ``before->during`` when it was in flight as the phase
    changed), its status (or ``timeout`` / an exception name), whether it carried a note of degradation,
    and when it started (monotonic seconds)."""

    phase: str
    status: int | str
    degraded: bool = False
    started: float = 0.0


@dataclass
class Load:
    """Calls ``request()`` in a loop on a thread until :meth:`stop` or ``max_requests``.

    ``request`` returns ``(status, degraded)``; an exception is recorded by its class name (an
    ``httpx.TimeoutException`` as ``timeout``), so a hang shows as a figure instead of a stuck test.
    """

    request: Callable[[], tuple[int, bool]]
    phase: Phase
    max_requests: int = 20_000
    answers: list[Answer] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Load:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set() and len(self.answers) < self.max_requests:
            phase, started = self.phase.name, time.monotonic()
            try:
                status, degraded = self.request()
            except Exception as exc:
                name = type(exc).__name__
                status, degraded = ("timeout" if "Timeout" in name else name), False
            if self.phase.name != phase:  # in flight when the fault began or ended
                phase = f"{phase}->{self.phase.name}"
            self.answers.append(Answer(phase, status, degraded, started))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def by_phase(self) -> dict[str, Counter[int | str]]:
        """Phase -> count of answers per status."""
        out: dict[str, Counter[int | str]] = {}
        for a in self.answers:
            out.setdefault(a.phase, Counter())[a.status] += 1
        return out


def tally(name: str, load: Load) -> str:
    """One line of figures: the answers of ``load`` per phase and status."""
    parts = [
        f"{phase}: " + ", ".join(f"{status} x{n}" for status, n in sorted(c.items(), key=str))
        for phase, c in load.by_phase().items()
    ]
    return f"{name}: " + "; ".join(parts)


class EventPoster:
    """``POST /events`` of one event per call, each with its own ``sessionId`` (its identity), spread over
    ``visitors`` visitors; remembers which were acknowledged (202) and the 503 answers."""

    def __init__(self, edit: httpx.Client, tenant: str, visitors: int = 100) -> None:
        self.edit, self.tenant, self.visitors = edit, tenant, visitors
        self.numbers = itertools.count()
        self.acked: set[str] = set()
        self.refusals: list[httpx.Response] = []

    def __call__(self) -> tuple[int, bool]:
        n = next(self.numbers)
        event = {
            "visitorId": f"v{n % self.visitors}",
            "eventType": "view",
            "productId": "p5",
            "sessionId": f"e{n}",
            "timestamp": 1_700_000_000 + n,
        }
        r = self.edit.post("/events", params={"tenant": self.tenant}, json=event)
        if r.status_code == 202:
            self.acked.add(f"e{n}")
        elif r.status_code == 503:
            self.refusals.append(r)
        return r.status_code, False

    def lost(self) -> set[str]:
        """The acknowledged events ``GET /events`` does not return (the store keeps 200 per visitor:
        keep the load under ``200 * visitors`` events)."""
        stored: set[str] = set()
        for v in range(self.visitors):
            params = {"tenant": self.tenant, "visitorId": f"v{v}", "limit": 1000}
            r = self.edit.get("/events", params=params)
            r.raise_for_status()
            stored |= {e["sessionId"] for e in r.json()["events"]}
        return self.acked - stored


class VersionedWriter:
    """Replaces one versioned document (a rule, a container) in a loop with ``body(generation, version)``,
    remembering the last generation acknowledged (200) and the 503 answers."""

    def __init__(self, client: httpx.Client, path: str, tenant: str, body: Callable[[int, int], Any]) -> None:
        self.client, self.path, self.params, self.body = client, path, {"tenant": tenant}, body
        self.version = 1
        self.generations = itertools.count(1)
        self.acked = 0
        self.refusals: list[httpx.Response] = []

    def __call__(self) -> tuple[int, bool]:
        generation = next(self.generations)
        r = self.client.put(self.path, params=self.params, json=self.body(generation, self.version))
        if r.status_code == 200:
            doc = r.json().get("rule", r.json())
            self.version, self.acked = doc["version"], generation
        elif r.status_code == 409:  # an earlier write landed although its answer was a 503: re-read
            current = self.client.get(self.path, params=self.params)
            if current.status_code == 200:
                self.version = current.json()["version"]
        elif r.status_code == 503:
            self.refusals.append(r)
        return r.status_code, False

    def lost(self) -> bool:
        """Whether the document is behind the last acknowledged generation (its ``name`` is ``gen N``)."""
        now = self.client.get(self.path, params=self.params).json()
        return int(now["name"].removeprefix("gen ")) < self.acked
