"""``aisle serve``: start the platform's services (uvicorn, one process group per service).

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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import typer

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

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
    for name, module, port_attr in available_services():
        if only and name not in only:
            continue
        port = getattr(settings, port_attr)
        # search, proxy and predict carry the query load; the others are configuration and auth traffic
        service_workers = n_workers if name in ("search", "proxy", "predict") else 1
        cmd = [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            f"{module}:create_app",
            "--host",
            settings.host,
            "--port",
            str(port),
            "--workers",
            str(service_workers),
            "--no-access-log",
            "--log-level",
            "warning",
            "--log-config",
            str(log_config),
        ]
        env = {**os.environ, MULTIPROC_ENV: str(fresh_dir(metrics_root / name))}
        procs.append((name, subprocess.Popen(cmd, env=env)))
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
            for name, proc in procs:
                if proc.poll() is not None:
                    typer.secho(
                        f"{name} exited with code {proc.returncode}; stopping the others", fg="red", err=True
                    )
                    stop()
                    raise typer.Exit(1)
            time.sleep(0.5)
    except KeyboardInterrupt:
        stop()


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
