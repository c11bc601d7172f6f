"""HAProxy from the machine's packages in front of real replicas (``from tests.support.haproxy import ...``).

:func:`haproxy_config` writes the configuration ``docs/deploy.md`` shows (health checks on ``GET /health``,
retries redispatched to another replica); :class:`HAProxy` runs ``haproxy`` in the foreground with it
and reads each server's state and counters from its stats socket (``show stat``, management.txt
section 9.3).
"""

from __future__ import annotations

import csv
import io
import shutil
import socket
import subprocess
import time
from pathlib import Path

HAPROXY = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/usr/local/sbin")
"""The ``haproxy`` binary (Debian's ``/usr/sbin/haproxy``), or None when the machine has none."""

BACKEND = "search"
RETRY_ON = "conn-failure empty-response response-timeout"


def haproxy_config(
    port: int,
    servers: dict[str, int],
    stats_socket: Path,
    *,
    check_inter_ms: int = 500,
    fall: int = 2,
    rise: int = 2,
    retry: bool = True,
) -> str:
    """The configuration: ``127.0.0.1:port`` balanced over ``servers`` (name -> loopback port).

    A server is marked down after ``fall`` failed checks ``check_inter_ms`` apart (``GET /health`` not
    answering 200 within ``timeout check``) and up again after ``rise`` good ones. Until then a request
    sent to a dead server is retried on the other one: ``retry-on conn-failure empty-response
    response-timeout`` (the connection was refused, closed without an answer, or not answered in
    ``timeout server``), ``retries 2`` and ``option redispatch 1`` (every retry goes to another server).
    HAProxy retries any method: that is safe for what it fronts here, search, whose operations only
    read (``docs/deploy.md`` keeps only ``conn-failure`` in front of writes). Responses carry
    ``X-Served-By: <server>``. ``retry=False`` (for comparison) sends each request once: ``retries 0``,
    no redispatch.
    """
    retries = (
        ["    retries 2", "    option redispatch 1", f"    retry-on {RETRY_ON}"]
        if retry
        else ["    retries 0", "    retry-on none"]
    )
    lines = [
        "global",
        "    maxconn 1024",
        f"    stats socket {stats_socket} mode 600 level admin",
        "",
        "defaults",
        "    mode http",
        "    timeout connect 1s",
        "    timeout client 30s",
        "    timeout server 10s",
        "    timeout check 2s",  # above Redis's 1 s connect timeout (/health may read the build board)
        *retries,
        "",
        "frontend aisle",
        f"    bind 127.0.0.1:{port}",
        f"    default_backend {BACKEND}",
        "",
        f"backend {BACKEND}",
        "    balance roundrobin",
        "    option httpchk GET /health",
        "    http-check expect status 200",
        "    http-response set-header X-Served-By %[srv_name]",
        f"    default-server inter {check_inter_ms}ms fall {fall} rise {rise}"
        " on-marked-down shutdown-sessions",
    ]
    lines += [f"    server {name} 127.0.0.1:{server_port} check" for name, server_port in servers.items()]
    return "\n".join(lines) + "\n"


class HAProxy:
    """``haproxy -db -f <config>`` (foreground, no daemon) on 127.0.0.1:``port``.

    Args:
        directory: where the configuration file and the stats socket go.
        port: the frontend's port.
        servers: backend server name -> loopback port of the replica.
        check_inter_ms: milliseconds between health checks of one server.
        retry: retry a failed request on another server (see :func:`haproxy_config`).
    """

    def __init__(
        self,
        directory: Path,
        port: int,
        servers: dict[str, int],
        *,
        check_inter_ms: int = 500,
        retry: bool = True,
    ) -> None:
        if HAPROXY is None:
            raise RuntimeError("haproxy is not installed (apt-get install haproxy)")
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.socket_path = directory / "haproxy.sock"
        self.config_path = directory / "haproxy.cfg"
        self.config_path.write_text(
            haproxy_config(port, servers, self.socket_path, check_inter_ms=check_inter_ms, retry=retry)
        )
        check = subprocess.run([HAPROXY, "-c", "-q", "-f", str(self.config_path)], capture_output=True)
        if check.returncode != 0:
            raise RuntimeError(f"haproxy refused its configuration: {check.stderr.decode()}")
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 10.0) -> None:
        """Start haproxy and wait until its stats socket answers."""
        assert HAPROXY is not None
        self.proc = subprocess.Popen(
            [HAPROXY, "-db", "-f", str(self.config_path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.command("show info")
                return
            except OSError:
                if self.proc.poll() is not None:
                    err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                    raise RuntimeError(f"haproxy exited with {self.proc.returncode}: {err}") from None
                if time.monotonic() > deadline:
                    raise RuntimeError("haproxy's stats socket did not answer") from None
                time.sleep(0.05)

    def command(self, line: str) -> str:
        """One command on the stats socket (a connection each, HAProxy's non-interactive mode)."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(2.0)
            sock.connect(str(self.socket_path))
            sock.sendall(line.encode() + b"\n")
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def stats(self) -> dict[str, dict[str, str]]:
        """``show stat`` of the backend's servers: server name -> its CSV row (``status``: ``UP``,
        ``DOWN``, ``UP 1/2`` while rising...; ``stot`` requests sent, ``wretr`` retries, ``wredis``
        redispatches, ``eresp``/``econ`` response/connection errors, ``chkdown`` UP->DOWN transitions)."""
        text = self.command("show stat").lstrip("# ")
        rows = csv.DictReader(io.StringIO(text))
        return {
            row["svname"]: row
            for row in rows
            if row["pxname"] == BACKEND and row["svname"] not in ("FRONTEND", "BACKEND")
        }

    def status(self, server: str) -> str:
        """The server's check status as HAProxy sees it: ``UP``, ``DOWN``, ``UP 1/2``, ``DOWN 1/2``..."""
        return self.stats()[server]["status"]

    def wait_status(self, server: str, wanted: str, timeout_s: float = 30.0, poll_s: float = 0.02) -> float:
        """Poll the stats socket until ``server`` is exactly ``wanted``; returns ``time.monotonic()`` then.

        Raises:
            TimeoutError: not reached within ``timeout_s``.
        """
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.status(server) == wanted:
                return time.monotonic()
            time.sleep(poll_s)
        raise TimeoutError(f"haproxy did not mark {server} {wanted} within {timeout_s} s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
