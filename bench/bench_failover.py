"""Failover behind a real load balancer: two search replicas behind HAProxy, one stopped and restarted
under load (issue 21's figures; ``docs/deploy.md`` shows the configuration).

Setup (:mod:`tests.support.failover`, the same as ``tests/deploy/test_failover.py``): a ``file://``
bucket with a tenant of ``PRODUCTS`` synthetic products, two ``uvicorn`` search replicas (one worker
each, auth on, each its own ``AISLE_DATA_DIR``), Debian's HAProxy with health checks every 500 ms
(``fall 2 rise 2``). ``CLIENTS`` keep-alive clients send ``GET /search`` back to back through HAProxy;
after ``WARM_S`` the first replica gets SIGKILL (or SIGTERM: uvicorn drains), is started again
``DOWN_S`` after the stop (with an empty data directory: it rebuilds its index from the bucket), and the
load runs ``AFTER_S`` more once HAProxy has it ``UP``.

Printed per run: the timeline (HAProxy marked the server down / it was restarted / marked up, seconds
after the stop), then per phase the requests, the failed ones (status or transport error), the share
each replica served and p50/p99 latency, and HAProxy's retries and redispatches. Runs: with the retries
of ``docs/deploy.md`` (kill, then graceful stop), and a kill with retries off (``retries 0``) to show what
they save. ``data_dir`` (the shared data) is not needed. Skipped when ``haproxy`` is not installed.
"""

from __future__ import annotations

import os
import statistics
import tempfile
from pathlib import Path
from typing import Literal

from tests.support.failover import PHASES, FailoverReport, run_failover, search_cluster
from tests.support.haproxy import HAPROXY

PRODUCTS = 2000
CLIENTS = 12
WARM_S, DOWN_S, AFTER_S = 3.0, 4.0, 4.0


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ranked = sorted(values)
    return ranked[min(len(ranked) - 1, int(q * len(ranked)))]


def show(label: str, report: FailoverReport) -> None:
    print(
        f"\n{label}: down after {report.down_s:.2f} s, restarted at {report.restart_s:.2f} s, "
        f"up at {report.up_s:.2f} s (seconds after the stop)"
    )
    print(
        f"  {'phase':<11} {'requests':>8} {'failed':>6}  {'s1/s2 served':>12}  "
        f"{'p50 ms':>7} {'p99 ms':>7}  failures"
    )
    for phase in PHASES:
        served = report.served_by[phase]
        lat = report.latencies_ms[phase]
        kinds = {k: n for k, n in report.outcomes[phase].items() if k != "200"}
        p50 = statistics.median(lat) if lat else float("nan")
        print(
            f"  {phase:<11} {report.total(phase):>8} {report.failed(phase):>6}  "
            f"{served['s1']:>5}/{served['s2']:<6}  {p50:>7.1f} {percentile(lat, 0.99):>7.1f}  {kinds or ''}"
        )
    names = {
        "wretr": "retries",
        "wredis": "redispatches",
        "eresp": "response errors",
        "econ": "connect errors",
    }
    for server in report.stats:
        counts = ", ".join(f"{name} {report.counted(server, field)}" for field, name in names.items())
        print(f"  haproxy {server}: {report.stats[server]['status']}, {counts}")


def main(data_dir: Path) -> None:
    del data_dir
    if HAPROXY is None:
        print("skipped: haproxy is not installed (apt-get install haproxy)")
        return
    print(
        f"machine load (1/5/15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} cores"
    )
    print(f"{PRODUCTS} products, {CLIENTS} clients, GET /search through HAProxy")
    with tempfile.TemporaryDirectory(prefix="aisle-failover-") as tmp:
        with search_cluster(Path(tmp) / "retry", products=PRODUCTS) as cluster:
            runs: list[tuple[Literal["kill", "term"], str]] = [
                ("kill", "SIGKILL, retries on"),
                ("term", "SIGTERM (graceful), retries on"),
            ]
            for how, label in runs:
                report = run_failover(
                    cluster, how, clients=CLIENTS, warm_s=WARM_S, down_s=DOWN_S, after_s=AFTER_S
                )
                show(label, report)
        with search_cluster(Path(tmp) / "no-retry", products=PRODUCTS, retry=False) as cluster:
            report = run_failover(
                cluster, "kill", clients=CLIENTS, warm_s=WARM_S, down_s=DOWN_S, after_s=AFTER_S
            )
            show("SIGKILL, retries off (retries 0)", report)
    print(f"machine load after (1/5/15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
