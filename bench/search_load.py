"""Search latency under load with wrk (Debian's ``wrk`` 4.1): p50 / p99 from its own histogram.

wrk keeps ``connections`` keep-alive connections busy (closed loop: each sends its next search when the
last one answered) for ``seconds``, cycling through the given requests; a Lua script holds them, pre-
formatted, and prints wrk's summary as one line. wrk's latencies are in microseconds, from its
corrected histogram. Non-2xx answers and socket errors are counted. ``ordered=True`` starts at the
first request and goes in order (the default starts at a random one): a caller that rotates its query
list per run sends fresh queries to each run until the list wraps.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

DONE = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("WRK %d %d %d %.1f %.1f %d\\n", summary.requests, e.status,
    e.connect + e.read + e.write + e.timeout, latency:percentile(50), latency:percentile(99),
    summary.duration))
end
"""


@dataclass
class WrkResult:
    """Requests answered, non-2xx answers, socket errors, p50 / p99 (ms) and requests a second."""

    requests: int
    non_2xx: int
    socket_errors: int
    p50_ms: float
    p99_ms: float
    rate: float


@dataclass
class WrkRun:
    """A wrk process under way and the Lua script it reads (removed once its result is read)."""

    proc: subprocess.Popen[str]
    script: Path


def wrk_available() -> bool:
    return shutil.which("wrk") is not None


def _lua(requests: list[tuple[str, bytes | None]], headers: dict[str, str], ordered: bool = False) -> str:
    head = "{" + ", ".join(f'["{k}"] = "{v}"' for k, v in headers.items()) + "}"
    post_head = (
        "{"
        + ", ".join(
            [*(f'["{k}"] = "{v}"' for k, v in headers.items()), '["Content-Type"] = "application/json"']
        )
        + "}"
    )
    lines = ["local reqs = {}"]
    for path, body in requests:
        if body is None:
            lines.append(f'reqs[#reqs + 1] = wrk.format("GET", [==[{path}]==], {head})')
        else:
            lines.append(
                f'reqs[#reqs + 1] = wrk.format("POST", [==[{path}]==], {post_head}, [==[{body.decode()}]==])'
            )
    lines.append("local i = 0" if ordered else "local i = math.random(#reqs)")
    lines.append("request = function() i = i % #reqs + 1; return reqs[i] end")
    return "\n".join(lines) + DONE


def start_wrk(
    port: int,
    requests: list[tuple[str, bytes | None]],
    headers: dict[str, str],
    *,
    seconds: float,
    connections: int = 8,
    threads: int = 2,
    ordered: bool = False,
) -> WrkRun:
    """Start wrk against 127.0.0.1:``port`` (at most one thread per connection); read its result with
    :func:`wrk_result`. ``ordered``: see the module docstring."""
    fd, name = tempfile.mkstemp(prefix="aisle-bench-wrk-", suffix=".lua")
    os.close(fd)
    script = Path(name)
    script.write_text(_lua(requests, headers, ordered))
    threads = max(1, min(threads, connections))
    cmd = [
        "wrk",
        "-t",
        str(threads),
        "-c",
        str(connections),
        "-d",
        f"{max(1, round(seconds))}s",
        "--timeout",
        "10s",
        "-s",
        str(script),
        f"http://127.0.0.1:{port}",
    ]
    return WrkRun(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True), script)


def wrk_result(run: WrkRun) -> WrkResult:
    """Wait for wrk, remove its script and read its summary line.

    Raises:
        RuntimeError: wrk printed no summary (its output given).
    """
    try:
        out, _ = run.proc.communicate(timeout=600)
    finally:
        run.script.unlink(missing_ok=True)
    for line in out.splitlines():
        if line.startswith("WRK "):
            n, status, sockets, p50, p99, duration_us = line.split()[1:]
            return WrkResult(
                int(n),
                int(status),
                int(sockets),
                float(p50) / 1000,
                float(p99) / 1000,
                int(n) / (int(duration_us) / 1e6),
            )
    raise RuntimeError(f"wrk printed no summary: {out[-500:]}")


def run_wrk(
    port: int, requests: list[tuple[str, bytes | None]], headers: dict[str, str], *, seconds: float
) -> WrkResult:
    return wrk_result(start_wrk(port, requests, headers, seconds=seconds))
