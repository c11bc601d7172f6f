"""Services started as real processes, as ``aisle serve`` starts them, for tests across processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
from tests.support.sockets import free_port
from tests.support.waiting import wait_until


def start_service(
    module: str, env: dict[str, str], log: Path, port: int | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """``module``'s app (``aisle.services.<name>.app``) under uvicorn on ``port`` (default: a free one),
    its output in ``log``. Returns the process and its base URL."""
    port = port or free_port()
    cmd = [sys.executable, "-m", "uvicorn", "--factory", f"{module}:create_app", "--host", "127.0.0.1",
           "--port", str(port), "--log-level", "warning"]  # fmt: skip
    out = log.open("ab")
    return subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT), f"http://127.0.0.1:{port}"


def wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    """Wait until ``url`` answers ``GET /health``; fails with the log's tail when the process exits."""

    def answers() -> bool:
        assert proc.poll() is None, f"{url} exited:\n{log.read_text()[-3000:]}"
        try:
            return httpx.get(f"{url}/health", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(answers, f"{url} answers", every=0.2)


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """Terminate every process, kill one still running 10 s later."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
