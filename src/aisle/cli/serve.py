"""``aisle serve``: start the platform's services (uvicorn, one process group per service)."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time

import typer

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
    only: list[str] = typer.Option([], "--only", help="Start only these services (search, predict, ...)."),
    workers: int = typer.Option(None, help="Worker processes per service (default: AISLE_WORKERS)."),
) -> None:
    """Start every available service and wait; Ctrl-C stops them all."""
    from aisle.core.config import load_settings

    settings = load_settings()
    n_workers = workers or settings.workers
    procs: list[tuple[str, subprocess.Popen[bytes]]] = []
    for name, module, port_attr in available_services():
        if only and name not in only:
            continue
        port = getattr(settings, port_attr)
        # search and predict carry the query load; the others are configuration and auth traffic
        service_workers = n_workers if name in ("search", "predict") else 1
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
        ]
        procs.append((name, subprocess.Popen(cmd, env=os.environ.copy())))
        typer.echo(f"{name:<8} http://{settings.host}:{port}  (docs: /docs)")

    def stop() -> None:
        for _service, proc in procs:
            if proc.poll() is None:
                proc.terminate()

    def on_sigterm(*_: object) -> None:
        stop()
        sys.exit(0)

    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        while procs:
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
        for _, proc in procs:
            proc.wait(timeout=10)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
