"""The build board: progress of the background builds of derived artifacts (job state).

A build (a tenant's text or photo embeddings, its learned ranker, a heavy recommendation model) is
written by the process running it on every progress step. The services read it to tell "being built"
from "missing" (``vectors_building`` 503 with a ``Retry-After``, ``queryGraph.hybrid``), ``GET /health``
and ``aisle status`` to show what is ready. Two backends behind :class:`BuildBoard`, chosen by
:func:`aisle.core.builds_resolver.open_build_board`: with ``AISLE_REDIS_URL`` set, Redis
(:mod:`aisle.core.builds_redis`), so every replica on every machine sees the same builds; without it,
one small file per build on the local disk, ``<data_dir>/builds/<tenant>/<artifact>.json``, replaced
atomically (temporary file + ``os.replace``), so a reader never sees half a document
(:class:`FileBuildBoard`, one machine).

States: ``queued`` (announced by the builder, not started), ``running``, ``done``, ``failed`` (with the
reason in ``message``). A ``queued`` or ``running`` entry whose builder process is gone (on this
machine: its pid is not running; on another: no write for :data:`STALE_AFTER_S`) reads as
``interrupted``: the next builder (``make run`` again) restarts it, and the artifact itself is only
ever published complete (atomic directories), so nothing half-written is used.

The ETA is a linear extrapolation of the elapsed time over the fraction done (seconds).
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

import orjson

BuildState = Literal["queued", "running", "done", "failed", "interrupted"]
ACTIVE: tuple[BuildState, ...] = ("queued", "running")
STALE_AFTER_S = 900.0
"""An active build written from another machine and not updated for this many seconds reads as
``interrupted`` (its process cannot be asked; a builder reports progress at least every few seconds
while it embeds, trains or uploads)."""
HOST = socket.gethostname()


@dataclass(frozen=True)
class Build:
    """One build's state. ``done``/``total`` count its work units (texts, photos, queries...)."""

    tenant: str
    artifact: str
    state: BuildState
    done: int = 0
    total: int = 0
    message: str = ""
    started_at: float | None = None
    updated_at: float = 0.0
    pid: int = 0
    host: str = field(default=HOST)

    @property
    def percent(self) -> int:
        """0..100 (100 once done)."""
        if self.state == "done":
            return 100
        return min(99, 100 * self.done // self.total) if self.total else 0

    @property
    def eta_s(self) -> float | None:
        """Seconds left, extrapolated linearly from the progress so far; None before any progress."""
        if self.state != "running" or not self.total or not self.done or self.started_at is None:
            return None
        elapsed = max(self.updated_at - self.started_at, 0.0)
        return elapsed * (self.total - self.done) / self.done

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    def to_dict(self) -> dict[str, object]:
        """The JSON shape of ``GET /health`` and ``aisle status --json``."""
        eta = self.eta_s
        return {
            "artifact": self.artifact,
            "state": self.state,
            "percent": self.percent,
            "etaSeconds": None if eta is None else round(eta),
            "message": self.message,
        }


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, another user's
        return True
    return True


def checked(build: Build, now: float | None = None) -> Build:
    """``build`` as a reader should see it: ``interrupted`` when it is active but its builder is gone
    (this machine: the pid is not running; another machine: no update for :data:`STALE_AFTER_S`)."""
    if not build.active:
        return build
    if build.host == HOST:
        gone = not _alive(build.pid)
    else:
        gone = (time.time() if now is None else now) - build.updated_at > STALE_AFTER_S
    return Build(**{**build.__dict__, "state": "interrupted"}) if gone else build


class BuildBoard(Protocol):
    """Where builds report their state and the services read it (see module docstring)."""

    def write(self, build: Build) -> None:
        """Replace the build's state (``updated_at`` is set to now)."""
        ...

    def get(self, tenant: str, artifact: str) -> Build | None:
        """The build's state (``interrupted`` when its builder died), or None when never announced."""
        ...

    def all(self) -> list[Build]:
        """Every announced build, by tenant then artifact."""
        ...

    def building(self, tenant: str, artifact: str) -> Build | None:
        """The build when it is queued or running, else None."""
        ...

    def by_tenant(self) -> dict[str, list[Build]]:
        """Every announced build grouped by tenant."""
        ...


class FileBuildBoard:
    """The build files under ``<data_dir>/builds`` (see module docstring)."""

    def __init__(self, data_dir: Path) -> None:
        self.root = Path(data_dir) / "builds"

    def _path(self, tenant: str, artifact: str) -> Path:
        return self.root / tenant / f"{artifact}.json"

    def write(self, build: Build) -> None:
        """Replace the build's file atomically."""
        path = self._path(build.tenant, build.artifact)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        doc = {**build.__dict__, "updated_at": time.time()}
        tmp.write_bytes(orjson.dumps(doc))
        os.replace(tmp, path)

    def get(self, tenant: str, artifact: str) -> Build | None:
        """The build's state (``interrupted`` when its builder died), or None when never announced."""
        try:
            doc = orjson.loads(self._path(tenant, artifact).read_bytes())
            build = Build(**doc)
        except (OSError, orjson.JSONDecodeError, TypeError):
            return None
        return checked(build)

    def building(self, tenant: str, artifact: str) -> Build | None:
        """The build when it is queued or running, else None."""
        build = self.get(tenant, artifact)
        return build if build is not None and build.active else None

    def all(self) -> list[Build]:
        """Every announced build, by tenant then artifact."""
        if not self.root.is_dir():
            return []
        found = []
        for path in sorted(self.root.glob("*/*.json")):
            build = self.get(path.parent.name, path.stem)
            if build is not None:
                found.append(build)
        return found

    def by_tenant(self) -> dict[str, list[Build]]:
        return group_by_tenant(self.all())


def group_by_tenant(builds: list[Build]) -> dict[str, list[Build]]:
    out: dict[str, list[Build]] = {}
    for build in builds:
        out.setdefault(build.tenant, []).append(build)
    return out


class BuildReporter:
    """Writes one build's progress to the board as it runs (what a builder holds per artifact).

    ``queue()`` announces it, ``progress(stage, done, total)`` (the signature of
    :class:`aisle.core.progress.ProgressLine`) moves it to ``running``, ``finish()``/``fail(reason)``
    end it. Writes are throttled to one a second, except state changes.
    """

    def __init__(self, board: BuildBoard, tenant: str, artifact: str) -> None:
        self.board = board
        self.tenant = tenant
        self.artifact = artifact
        self._started: float | None = None
        self._last = 0.0

    def _write(self, state: BuildState, done: int = 0, total: int = 0, message: str = "") -> None:
        self.board.write(
            Build(self.tenant, self.artifact, state, done, total, message, self._started, pid=os.getpid())
        )

    def queue(self) -> None:
        self._write("queued", message="waiting for the builder")

    def start(self, message: str = "started") -> None:
        self._started = time.time()
        self._write("running", message=message)

    def progress(self, stage: str, done: int, total: int) -> None:
        if self._started is None:
            self.start()
        now = time.monotonic()
        if now - self._last >= 1.0 or done >= total:
            self._last = now
            self._write("running", done, total, stage)

    def finish(self, message: str = "ready") -> None:
        self._write("done", message=message)

    def fail(self, reason: str) -> None:
        self._write("failed", message=reason)
