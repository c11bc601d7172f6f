"""``aisle serve``: start the platform's services (uvicorn, one process group per service).

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
from pathlib import Path

import typer

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
START_GRACE_S = 10.0
"""A service worker that exits sooner after its start is a start-up failure: everything stops."""

# (name, app factory module, settings attribute holding its port)
SERVICES: list[tuple[str, str, str]] = [
    ("search", "aisle.services.search.app", "search_port"),
    ("proxy", "aisle.services.proxy.app", "proxy_port"),
    ("predict", "aisle.services.predict.app", "predict_port"),
    ("edit", "aisle.services.edit.app", "edit_port"),
    ("rules", "aisle.services.rules.app", "rules_port"),
    ("vectors", "aisle.services.vectors.app", "vector_port"),
    ("auth", "aisle.services.auth.app", "auth_port"),
]


def available_services() -> list[tuple[str, str, str]]:
    """The services whose app module is installed."""
    return [s for s in SERVICES if importlib.util.find_spec(s[1]) is not None]


def serve(
    only: list[str] = typer.Option(
        [], "--only", help="Start only these services (search, proxy, predict, ..., typesense)."
    ),
    workers: int = typer.Option(None, help="Worker processes per service (default: AISLE_WORKERS)."),
    build_demo: Path = typer.Option(
        None,
        "--build-demo",
        help="The shared data folder: also start the background builder of the demo's heavy artifacts "
        "(`aisle demo --heavy`; progress in `aisle status` and GET /health).",
    ),
) -> None:
    """Start every available service and wait; Ctrl-C stops them all (and the background builder)."""
    from aisle.core.config import load_settings
    from aisle.services.common.request_id import LOG_CONFIG

    settings = load_settings()
    n_workers = workers or settings.workers
    run_dir = Path(tempfile.mkdtemp(prefix="aisle-serve-"))
    metrics_root = Path(os.environ[MULTIPROC_ENV]) if os.environ.get(MULTIPROC_ENV) else run_dir / "metrics"
    log_config = run_dir / "logging.json"
    log_config.write_text(json.dumps(LOG_CONFIG))
    procs: list[tuple[str, subprocess.Popen[bytes]]] = []
    # a service worker's command, environment and start time: one that dies after START_GRACE_S is
    # started again (as uvicorn's own supervisor did); one that dies sooner stops everything
    restart: dict[int, tuple[list[str], dict[str, str], float]] = {}
    taken = [
        f"{name} ({settings.host}:{getattr(settings, attr)})"
        for name, _module, attr in available_services()
        if (not only or name in only) and not port_is_free(settings.host, getattr(settings, attr))
    ]
    if taken:
        typer.secho(f"in use (another `aisle serve`?): {', '.join(taken)}", fg="red", err=True)
        shutil.rmtree(run_dir, ignore_errors=True)
        raise typer.Exit(1)
    for name, module, port_attr in available_services():
        if only and name not in only:
            continue
        port = getattr(settings, port_attr)
        # search, proxy and predict carry the query load; the others are configuration and auth traffic
        service_workers = n_workers if name in ("search", "proxy", "predict") else 1
        cmd = worker_command(module, settings.host, port, log_config)
        env = {**os.environ, MULTIPROC_ENV: str(fresh_dir(metrics_root / name))}
        for _ in range(service_workers):
            procs.append((name, subprocess.Popen(cmd, env=env)))
            restart[id(procs[-1][1])] = (cmd, env, time.monotonic())
        typer.echo(f"{name:<8} http://{settings.host}:{port}  (docs: /docs)")

    builder: tuple[str, subprocess.Popen[bytes]] | None = None

    def stop() -> None:
        if builder is not None and builder[1].poll() is None:
            procs.append(builder)  # stopped with the services; the next `aisle serve` restarts it
        for _service, proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for _service, proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(run_dir, ignore_errors=True)

    def on_sigterm(*_: object) -> None:
        stop()
        sys.exit(0)

    from aisle.demo.external import typesense_process

    demo_search = typesense_process(settings, only, typer.echo)  # started last: nothing waits for it
    if demo_search is not None:
        procs.append(demo_search)
    if build_demo is not None:
        builder = start_builder(build_demo)
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        while procs:
            if builder is not None and builder[1].poll() is not None:
                code = builder[1].returncode
                typer.echo(f"background builds ended (exit code {code}); `aisle status` shows each one")
                builder = None
            for i, (name, proc) in enumerate(procs):
                if proc.poll() is None:
                    continue
                how = restart.pop(id(proc), None)
                if how is not None and time.monotonic() - how[2] > START_GRACE_S:
                    typer.echo(
                        f"{name}: a worker exited with code {proc.returncode}; starting another", err=True
                    )
                    procs[i] = (name, subprocess.Popen(how[0], env=how[1]))
                    restart[id(procs[i][1])] = (how[0], how[1], time.monotonic())
                    continue
                typer.secho(
                    f"{name} exited with code {proc.returncode}; stopping the others", fg="red", err=True
                )
                stop()
                raise typer.Exit(1)
            time.sleep(0.5)
    except KeyboardInterrupt:
        stop()


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


def start_builder(shared_data: Path) -> tuple[str, subprocess.Popen[bytes]]:
    """``aisle demo --heavy`` in a child process (see :mod:`aisle.demo.builder`); prints where to look."""
    cmd = [sys.executable, "-m", "aisle.cli", "demo", "--heavy", "--data-dir", str(shared_data)]
    proc = subprocess.Popen(cmd)
    typer.echo(
        "builder  embeddings, SIMILAR_ITEMS and the ranker build in the background: search answers "
        "lexically meanwhile; progress: `aisle status` or GET /health on any service"
    )
    return "builder", proc


def fresh_dir(path: Path) -> Path:
    """``path`` as an empty directory (its old content removed)."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
