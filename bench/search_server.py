"""Start and stop a real search-service process (uvicorn) for benchmarks."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServiceProcess:
    """``uvicorn --factory MODULE:create_app`` on a loopback port, with the given environment."""

    def __init__(self, module: str, env: dict[str, str], workers: int = 1) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cmd = [
            sys.executable, "-m", "uvicorn", "--factory", f"{module}:create_app", "--host", "127.0.0.1",
            "--port", str(self.port), "--workers", str(workers), "--no-access-log", "--log-level", "warning",
        ]  # fmt: skip
        self.proc = subprocess.Popen(cmd, env={**os.environ, **env})

    @classmethod
    def as_served(cls, service: str, env: dict[str, str], workers: int) -> ServiceProcess:
        """``service`` as ``make run`` starts it: ``aisle serve --only SERVICE --workers N`` (each worker
        on its own SO_REUSEPORT socket, :mod:`aisle.cli.worker`); ``proc`` is the ``aisle serve`` parent."""
        self = cls.__new__(cls)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, "-m", "aisle.cli", "serve", "--only", service, "--workers", str(workers)]
        port_env = {f"AISLE_{service.upper()}_PORT": str(self.port), "AISLE_HOST": "127.0.0.1"}
        self.proc = subprocess.Popen(cmd, env={**os.environ, **env, **port_env}, stdout=subprocess.DEVNULL)
        return self

    def wait_ready(self, timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/health", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None:
                raise RuntimeError(f"service exited with {self.proc.returncode}")
            time.sleep(0.3)
        raise TimeoutError("service did not become ready")

    def rss_mb(self) -> float:
        """Resident memory of the process tree (the uvicorn parent and its workers), in MiB."""
        pids = [self.proc.pid]
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        if children.exists():
            pids += [int(p) for p in children.read_text().split()]
        total = 0
        for pid in pids:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        return total / 1024

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
