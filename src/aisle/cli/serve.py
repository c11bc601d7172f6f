"""``aisle serve``: start the platform's services (uvicorn, one process group per service).

``--only search,auth`` (or ``--only search --only auth``) starts only those; a name it does not know
is a usage error (exit 2) before anything starts, and a run that would start nothing exits 1.

Each service worker is its own process with its own ``SO_REUSEPORT`` socket on the service's port
(:mod:`aisle.cli.worker`), so the kernel spreads connections over the workers; a worker that dies is
started again, unless it dies within :data:`START_GRACE_S` of its start (then everything stops).

Each service gets its own prometheus-client multiprocess directory, so ``GET /metrics`` sums its
workers: ``$PROMETHEUS_MULTIPROC_DIR/<service>`` when that variable is set, else ``<temp>/metrics/<service>``
in a fresh temporary directory removed on exit; either way emptied at start (stale files of an earlier
run would be summed too). Log lines carry the request id (uvicorn's ``--log-config``, see
:data:`aisle.services.common.request_id.LOG_CONFIG`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from aisle.cli.common import names

if TYPE_CHECKING:
    from aisle.core.config import Settings

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
START_GRACE_S = 10.0
"""A service worker that exits sooner after its start is a start-up failure: everything stops."""
POLL_S = 0.5
"""How often the children are looked at."""

# (name, app factory module, settings attribute holding its port)
SERVICES: list[tuple[str, str, str]] = [
    ("search", "aisle.services.search.app", "search_port"),
    ("proxy", "aisle.services.proxy.app", "proxy_port"),
    ("predict", "aisle.services.predict.app", "predict_port"),
    ("edit", "aisle.services.edit.app", "edit_port"),
    ("rules", "aisle.services.rules.app", "rules_port"),
    ("vectors", "aisle.services.vectors.app", "vector_port"),
    ("auth", "aisle.services.auth.app", "auth_port"),
    ("analytics", "aisle.services.analytics.app", "analytics_port"),
]
QUERY_LOAD = ("search", "proxy", "predict")
"""The services that carry the query load get ``--workers`` processes; the others (configuration and
auth traffic) one."""
DEMO_SEARCH = "typesense"
"""Not a service of Aisle: the demo's local Typesense server (the fashion tenant's external search)."""
SERVE_NAMES = (*(name for name, _module, _port in SERVICES), DEMO_SEARCH)
"""What ``--only`` may name."""


def available_services() -> list[tuple[str, str, str]]:
    """The services whose app module is installed."""
    return [s for s in SERVICES if importlib.util.find_spec(s[1]) is not None]


@dataclass
class Child:
    """A process ``aisle serve`` started. ``cmd``/``env`` set: a service worker, started again when it
    dies after ``grace_s`` seconds (:data:`START_GRACE_S` unless ``--start-grace``); unset: the Typesense
    server or the builder, never restarted."""

    name: str
    proc: subprocess.Popen[bytes]
    cmd: list[str] | None = None
    env: dict[str, str] | None = None
    grace_s: float = START_GRACE_S
    started: float = field(default_factory=time.monotonic)

    def restarted(self) -> Child | None:
        """A new worker in place of this one when it ran past the grace period, else None."""
        if self.cmd is None or time.monotonic() - self.started <= self.grace_s:
            return None
        return Child(self.name, subprocess.Popen(self.cmd, env=self.env), self.cmd, self.env, self.grace_s)


@dataclass
class Running:
    """What one ``aisle serve`` started: service workers (and the Typesense server), the builder, and
    the run directory (logging configuration, metrics) removed at the end."""

    run_dir: Path
    children: list[Child] = field(default_factory=list)
    builder: Child | None = None

    def stop(self) -> None:
        """Terminate every child (a running builder too: the next ``aisle serve`` restarts it), kill
        one that has not exited 10 s later, remove the run directory."""
        if self.builder is not None and self.builder.proc.poll() is None:
            self.children.append(self.builder)
        for child in self.children:
            if child.proc.poll() is None:
                child.proc.terminate()
        for child in self.children:
            try:
                child.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.proc.kill()
        shutil.rmtree(self.run_dir, ignore_errors=True)

    def check(self) -> None:
        """One look at the children: report the builder's end, start again a worker that died after
        its start-up, stop everything (exit 1) when one died during it or is not a worker."""
        if self.builder is not None and self.builder.proc.poll() is not None:
            code = self.builder.proc.returncode
            typer.echo(f"background builds ended (exit code {code}); `aisle status` shows each one")
            self.builder = None
        for i, child in enumerate(self.children):
            code = child.proc.poll()
            if code is None:
                continue
            again = child.restarted()
            if again is not None:
                typer.echo(f"{child.name}: a worker exited with code {code}; starting another", err=True)
                self.children[i] = again
                continue
            typer.secho(f"{child.name} exited with code {code}; stopping the others", fg="red", err=True)
            self.stop()
            raise typer.Exit(1)

    def wait(self) -> None:
        """Watch the children until Ctrl-C or SIGTERM (then stop them all)."""

        def on_sigterm(*_: object) -> None:
            self.stop()
            sys.exit(0)

        signal.signal(signal.SIGTERM, on_sigterm)
        try:
            while self.children:
                self.check()
                time.sleep(POLL_S)
        except KeyboardInterrupt:
            self.stop()


def serve(
    only: list[str] = typer.Option(
        [],
        "--only",
        help=f"Start only these, comma-separated or repeated: {', '.join(SERVE_NAMES)}.",
    ),
    workers: int = typer.Option(None, min=1, help="Worker processes per service (default: AISLE_WORKERS)."),
    build_demo: Path = typer.Option(
        None,
        "--build-demo",
        help="The shared data folder: also start the background builder of the demo's heavy artifacts "
        "(`aisle demo --heavy`; progress in `aisle status` and GET /health).",
    ),
    start_grace: float = typer.Option(
        START_GRACE_S,
        "--start-grace",
        min=0,
        help="Seconds after its start within which a worker's exit stops everything; a worker that "
        "exits later is started again.",
    ),
) -> None:
    """Start every available service and wait; Ctrl-C stops them all (and the background builder)."""
    from aisle.core.config import load_settings

    wanted = names(only, SERVE_NAMES, "--only")
    settings = load_settings()
    chosen = [s for s in available_services() if not wanted or s[0] in wanted]
    refuse_taken_ports(settings, chosen)
    running = Running(Path(tempfile.mkdtemp(prefix="aisle-serve-")))
    start_services(running, settings, chosen, workers or settings.workers, start_grace)
    from aisle.demo.external import typesense_process

    demo_search = typesense_process(settings, wanted, typer.echo)  # started last: nothing waits for it
    if demo_search is not None:
        running.children.append(Child(*demo_search))
    if build_demo is not None:
        running.builder = start_builder(build_demo)
    if not running.children and running.builder is None:
        running.stop()
        what = ", ".join(wanted) or "every service"
        typer.secho(f"nothing started for {what}: not installed, or not prepared by `aisle demo`", err=True)
        raise typer.Exit(1)
    running.wait()


def refuse_taken_ports(settings: Settings, services: list[tuple[str, str, str]]) -> None:
    """Exit 1 naming every service whose port something already listens on (before anything starts)."""
    taken = [
        f"{name} ({settings.host}:{getattr(settings, attr)})"
        for name, _module, attr in services
        if not port_is_free(settings.host, getattr(settings, attr))
    ]
    if taken:
        typer.secho(f"in use (another `aisle serve`?): {', '.join(taken)}", fg="red", err=True)
        raise typer.Exit(1)


def start_services(
    running: Running,
    settings: Settings,
    services: list[tuple[str, str, str]],
    n_workers: int,
    grace_s: float = START_GRACE_S,
) -> None:
    """Start each service's workers (:data:`QUERY_LOAD` services ``n_workers``, the others one), each
    service with its own emptied metrics directory, and print where each listens. A worker exiting
    after ``grace_s`` seconds is started again."""
    from aisle.services.common.request_id import LOG_CONFIG

    env_dir = os.environ.get(MULTIPROC_ENV)
    metrics_root = Path(env_dir) if env_dir else running.run_dir / "metrics"
    log_config = running.run_dir / "logging.json"
    log_config.write_text(json.dumps(LOG_CONFIG))
    for name, module, port_attr in services:
        port = getattr(settings, port_attr)
        cmd = worker_command(module, settings.host, port, log_config)
        env = {**os.environ, MULTIPROC_ENV: str(fresh_dir(metrics_root / name))}
        for _ in range(n_workers if name in QUERY_LOAD else 1):
            running.children.append(Child(name, subprocess.Popen(cmd, env=env), cmd, env, grace_s))
        typer.echo(f"{name:<8} http://{settings.host}:{port}  (docs: /docs)")


def worker_command(module: str, host: str, port: int, log_config: Path) -> list[str]:
    """One worker of a service: ``python -m aisle.cli.worker`` on its own ``SO_REUSEPORT`` socket, so
    the kernel spreads connections over a service's workers (:mod:`aisle.cli.worker` says why)."""
    return [
        sys.executable, "-m", "aisle.cli.worker", module,
        "--host", host, "--port", str(port), "--log-config", str(log_config),
    ]  # fmt: skip


def port_is_free(host: str, port: int) -> bool:
    """Whether ``host:port`` can be bound without ``SO_REUSEPORT``: nothing listens there. Checked before
    a service's workers bind it with ``SO_REUSEPORT``, which would otherwise share the port with an
    earlier ``aisle serve`` of the same user instead of failing."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def start_builder(shared_data: Path) -> Child:
    """``aisle demo --heavy`` in a child process (see :mod:`aisle.demo.builder`); prints where to look."""
    cmd = [sys.executable, "-m", "aisle.cli", "demo", "--heavy", "--data-dir", str(shared_data)]
    proc = subprocess.Popen(cmd)
    typer.echo(
        "builder  embeddings, SIMILAR_ITEMS and the ranker build in the background: search answers "
        "lexically meanwhile; progress: `aisle status` or GET /health on any service"
    )
    return Child("builder", proc)


def fresh_dir(path: Path) -> Path:
    """``path`` as an empty directory (its old content removed)."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
