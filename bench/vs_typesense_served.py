"""``bench_vs_typesense``'s first table: Aisle as ``make run`` serves it, against Typesense (issues 32, 43).

The tenants are the demo's, built as ``make run`` builds them (``aisle demo``: catalogs, indexes, rules,
text vectors for hybrid retrieval, the Home Depot ranker, the fashion tenant's fallback to a local
Typesense holding hardware products), kept in ``var/bench-demo`` and reused (``AISLE_BENCH_DEMO`` moves
it; built on first use, minutes). ``aisle serve --only search`` serves them with ``AISLE_WORKERS`` workers
and the demo's Typesense is started for the fallback, as ``make run`` does. Requests are the spec's
``POST /search`` (JSON body), sent by wrk (:mod:`bench.search_load`: Debian's wrk 4.1, one thread, keep-
alive connections in a closed loop, so the client does not set the pace), at 1 connection (p50 / p99)
and at 16 (requests a second). Typesense: the bench's own 0.24.1 server, one collection per tenant
holding the same catalog rows, searched over the tenant's searchable fields with the same facets
(:class:`bench.bench_vs_typesense.Engines`).

Rows, each its own service process (so one row's caches never serve another's queries), alternating
Typesense, then each Aisle row, ``ROUNDS`` times per connection count (medians over the rounds):

- *Aisle as served*: auth on (a bearer token scoped to the tenant, signed by the bucket's key as the auth
  service signs it), every answer recorded for analytics, guided search as the tenant has it (fashion:
  on), a ``visitorId`` on every search (1,000 visitors) so the A/B experiment check runs as for a shopper;
- *recording, guided search, experiments off*: the same, with ``"analytics": false``, ``"followUp":
  false`` and no ``visitorId`` (the issue's "show on and off": their cost is the ratio of the two rows);
- *auth off*: as served, with ``AISLE_AUTH=off``.

Query sets: the fashion mix (300 queries, repeated for ``SECONDS`` a run) and the Home Depot dev queries,
each run starting a quarter further into the list, in order, so a run's queries are fresh to its service
until it reaches those an earlier run sent (the second 16-connection round does: at about 420 requests a
second its 6 s run is longer than a quarter, so part of it repeats queries its service has seen).
Server CPU per request is the user + system time of the server's processes from /proc over the run
(robust to a busy machine, unlike wall-clock figures). The summary at the end gives the issue's ratios.

What issue 32's passes measured and changed (the fast lane, the catalog check on the event loop, the
vector tables in half precision, memory per worker) is in ``docs/benchmarks.md`` and this file's git
history.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from bench.http_load import cpu_seconds, get_many
from bench.search_load import WrkResult, start_wrk, wrk_result
from bench.search_server import ServiceProcess, free_port

ROUNDS = 2
CONNECTIONS = (1, 16)
SECONDS = float(os.environ.get("AISLE_BENCH_SERVED_SECONDS", "6"))
VISITORS = 1000
TYPESENSE = "Typesense 0.24.1"
SERVED = "Aisle as served"
QUIET = "recording, guided, experiments off"
AUTH_OFF = "Aisle auth off"
NO_MATCH = "qwrtzp zxqvk"


def demo_dir() -> Path:
    return Path(os.environ.get("AISLE_BENCH_DEMO", "var/bench-demo")).resolve()


def demo_env(data_dir: Path) -> dict[str, str]:
    """The storage and data settings of the bench's ``make run`` demo, built (fashion and homedepot,
    no recommendation models nor photo embeddings: search does not read them) when missing."""
    root = demo_dir()
    env = {"AISLE_STORAGE_URL": f"file://{root / 'bucket'}", "AISLE_DATA_DIR": str(root / "data")}
    port_file = root / "typesense_port"
    if not port_file.exists():
        root.mkdir(parents=True, exist_ok=True)
        port_file.write_text(str(free_port()))
    env["AISLE_TYPESENSE_PORT"] = port_file.read_text().strip()
    if not (root / "built").exists():
        print(f"aisle: building the make run demo in {root} (minutes, once)")
        cmd = [sys.executable, "-m", "aisle.cli", "demo", "--data-dir", str(data_dir), "--if-missing"]
        cmd += ["--only", "fashion,homedepot", "--no-recs", "--no-images"]
        subprocess.run(cmd, env={**os.environ, **env}, check=True, stdout=subprocess.DEVNULL)
        (root / "built").write_text("ok")
    return env


def configuration(env: dict[str, str], tenant: str) -> str:
    """What the tenant runs with, as served: fallback, rules, ranker, hybrid."""
    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.search.ranking.store import RankerStore
    from aisle.search.rules.book import RuleBooks
    from aisle.vectors.store import VectorStore

    store = open_blob_store(env["AISLE_STORAGE_URL"])
    config = Tenants(store).config(tenant)
    crs = config.crs
    fallback = (
        f"fallback {crs.backend.type if crs.backend else '?'} on {','.join(crs.fallback.when)}"
        if crs.active
        else "no fallback"
    )
    rules = len(RuleBooks(store).book(tenant).rules)
    ranker = "ranker" if RankerStore(store).current(tenant) is not None else "no ranker"
    vectors = VectorStore(Path(env["AISLE_DATA_DIR"]), bucket=store).has(tenant)
    hybrid = "hybrid on" if vectors and config.global_.hybrid.enabled else "hybrid off"
    return f"{fallback}, {rules} rules, {ranker}, {hybrid}"


@dataclass
class Side:
    """One row of the table: where its requests go, with which headers, and how a query is asked."""

    label: str
    port: int
    pid: int
    headers: dict[str, str]
    request: Callable[[str, int], tuple[str, bytes | None]]


def aisle_request(
    tenant: str, facets: tuple[str, ...], quiet: bool
) -> Callable[[str, int], tuple[str, bytes]]:
    """``POST /search`` as the storefront sends it (``quiet``: no recording, question nor visitor)."""

    def request(q: str, i: int) -> tuple[str, bytes]:
        body: dict[str, Any] = {"tenant": tenant, "query": q, "size": 20, "facets": list(facets)}
        if quiet:
            body |= {"analytics": False, "followUp": False}
        else:
            body["visitorId"] = f"bench-visitor-{i % VISITORS}"
        return "/search", orjson.dumps(body)

    return request


def _run(side: Side, queries: list[str], connections: int) -> tuple[WrkResult, float]:
    """One wrk run of ``SECONDS``; returns its result and the server's CPU ms per request."""
    requests = [side.request(q, i) for i, q in enumerate(queries)]
    cpu0 = cpu_seconds(side.pid)
    got = wrk_result(
        start_wrk(side.port, requests, side.headers, seconds=SECONDS, connections=connections, ordered=True)
    )
    if got.non_2xx or got.socket_errors:
        print(f"    {side.label}: {got.non_2xx} non-2xx answers, {got.socket_errors} socket errors")
    return got, (cpu_seconds(side.pid) - cpu0) / max(1, got.requests) * 1000


def _row(label: str, runs: list[tuple[WrkResult, float]], base: dict[str, float] | None) -> dict[str, float]:
    row = {
        "p50": statistics.median(r.p50_ms for r, _ in runs),
        "p99": statistics.median(r.p99_ms for r, _ in runs),
        "qps": statistics.median(r.rate for r, _ in runs),
        "cpu": statistics.median(c for _, c in runs),
    }
    ratio = ""
    if base is not None:
        ratio = (
            f"  | vs Typesense: p50 {row['p50'] / base['p50']:.2f}x p99 {row['p99'] / base['p99']:.2f}x "
            f"q/s {row['qps'] / base['qps']:.2f}x CPU {row['cpu'] / base['cpu']:.2f}x"
        )
    print(
        f"    {label:<34} p50 {row['p50']:6.2f} ms  p99 {row['p99']:6.2f} ms  {row['qps']:6.0f} q/s  "
        f"CPU {row['cpu']:5.2f} ms/req  (n={sum(r.requests for r, _ in runs)}){ratio}"
    )
    return row


def table(name: str, queries: list[str], sides: list[Side]) -> dict[int, dict[str, dict[str, float]]]:
    """Every side alternating, ``ROUNDS`` runs per connection count; returns connections -> label -> row."""
    print(
        f"\n{name} (POST /search; Typesense GET): {len(queries)} queries, size 20, wrk {SECONDS:.0f} s a run"
    )
    turns = len(CONNECTIONS) * ROUNDS
    rows: dict[int, dict[str, dict[str, float]]] = {}
    for c_i, connections in enumerate(CONNECTIONS):
        got: dict[str, list[tuple[WrkResult, float]]] = {side.label: [] for side in sides}
        for r in range(ROUNDS):
            start = (c_i * ROUNDS + r) * len(queries) // turns
            part = queries[start:] + queries[:start]
            for side in sides:
                got[side.label].append(_run(side, part, connections))
        print(f"  {connections} connection{'s' if connections > 1 else ''}:")
        base = _row(sides[0].label, got[sides[0].label], None)
        rows[connections] = {sides[0].label: base}
        for side in sides[1:]:
            rows[connections][side.label] = _row(side.label, got[side.label], base)
    return rows


def summary(tenant: str, rows: dict[int, dict[str, dict[str, float]]]) -> None:
    """The issue's figures: Aisle as served against Typesense, and what the three features cost."""
    one, many = rows[CONNECTIONS[0]], rows[CONNECTIONS[-1]]
    ts1, ts16, on1, on16 = one[TYPESENSE], many[TYPESENSE], one[SERVED], many[SERVED]
    off1, off16 = one[QUIET], many[QUIET]
    print(
        f"  {tenant}: as served / Typesense: p50 {on1['p50'] / ts1['p50']:.2f}x, "
        f"p99 {on1['p99'] / ts1['p99']:.2f}x (1 connection), "
        f"{on16['qps'] / ts16['qps']:.2f}x requests a second ({CONNECTIONS[-1]} connections);"
        f" recording + guided search + experiments cost {on16['cpu'] / off16['cpu'] - 1:+.1%} CPU a request, "
        f"{off16['qps'] / on16['qps'] - 1:+.1%} throughput, {on1['p50'] / off1['p50'] - 1:+.1%} p50"
    )


def wait_idle(service: ServiceProcess, headers: dict[str, dict[str, str]], timeout_s: float = 600.0) -> float:
    """Finish the service's start-up work before measuring: each worker builds its tenants' autocomplete
    indexes in a background thread (half of a worker's samples in a profile of the first minute), so
    ask every worker's first ``GET /suggestions`` (it waits for the build), then wait until the
    processes stay under a fifth of a core for three seconds. Returns the seconds waited."""
    import httpx

    start = time.monotonic()

    async def ask() -> None:
        async with httpx.AsyncClient(base_url=service.url, timeout=timeout_s) as client:
            asks = [
                client.get("/suggestions", params={"tenant": t, "qStr": "a"}, headers=headers.get(t, {}))
                for t in ("fashion", "homedepot")
                for _ in range(8)  # connections land on both workers (SO_REUSEPORT)
            ]
            await asyncio.gather(*asks)

    asyncio.run(ask())
    quiet = 0
    while quiet < 3 and time.monotonic() - start < timeout_s:
        before = cpu_seconds(service.proc.pid)
        time.sleep(1.0)
        quiet = quiet + 1 if cpu_seconds(service.proc.pid) - before < 0.2 else 0
    return time.monotonic() - start


def worker_rss(service: ServiceProcess) -> str:
    """Each process's resident memory, MiB, as ``RSS/PSS`` (the ``aisle serve`` parent, then its workers).

    PSS (``/proc/<pid>/smaps_rollup``) divides each shared page by the processes mapping it: the vector
    tables the workers map from the same files count once over the workers, where RSS counts them in
    each."""
    from bench.http_load import process_tree

    sizes = []
    for pid in process_tree(service.proc.pid):
        fields = {}
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
            name, _, value = line.partition(":")
            fields[name.strip()] = int(value.split()[0]) / 1024
        sizes.append((fields["Rss"], fields["Pss"]))
    return " ".join(f"{rss:.0f}/{pss:.0f}" for rss, pss in sizes)


def main(
    data_dir: Path,
    ts: Any,
    load_typesense: Any,
    engines_of: Any,
    fashion: list[str],
    hd: list[str],
    facets: tuple[str, ...],
) -> Any:
    """The as-served table (see the module docstring); ``ts`` the bench's Typesense server, which it
    loads with the demo's catalogs. Returns the ``Engines`` (the second table asks the same)."""
    from tests.support.auth import AuthKit

    from aisle.core.config import Settings, load_settings
    from aisle.core.storage import open_blob_store
    from aisle.demo.external import start_demo_typesense

    env = demo_env(data_dir)
    summaries: dict[str, dict[int, dict[str, dict[str, float]]]] = {}
    workers = load_settings().workers
    engines = engines_of(load_typesense(ts.url, env))
    settings = Settings(
        storage_url=env["AISLE_STORAGE_URL"],
        data_dir=env["AISLE_DATA_DIR"],
        typesense_port=int(env["AISLE_TYPESENSE_PORT"]),
    )
    external = start_demo_typesense(settings)  # the fashion tenant's fallback, as `aisle serve` starts it
    kit = AuthKit(open_blob_store(env["AISLE_STORAGE_URL"]), auth_url="http://bench-auth")
    token = {
        t: {"Authorization": f"Bearer {kit.token([t], scopes=['search:read'], ttl=3600)}"}
        for t in ("fashion", "homedepot")
    }
    print("\n== Aisle as make run serves it (the demo's tenants and settings), wrk ==")
    print(
        f"aisle: `aisle serve --only search`, {workers} workers a service; demo Typesense for the fallback: "
        f"{'started' if external is not None else 'NOT started'}"
    )
    for tenant in ("fashion", "homedepot"):
        print(f"aisle: {tenant}: {configuration(env, tenant)}")
    metrics = Path(tempfile.mkdtemp(prefix="aisle-bench-served-"))  # each service its own metrics files
    on_env = {**env, "AISLE_AUTH": "on", "AISLE_AUTH_URL": kit.auth_url}
    envs = {SERVED: on_env, QUIET: on_env, AUTH_OFF: {**env, "AISLE_AUTH": "off"}}
    services = {
        label: ServiceProcess.as_served(
            "search", {**e, "PROMETHEUS_MULTIPROC_DIR": str(metrics / str(i))}, workers=workers
        )
        for i, (label, e) in enumerate(envs.items())
    }
    try:
        for service in services.values():
            service.wait_ready()
        no_token: dict[str, dict[str, str]] = {}
        waited = sum(wait_idle(s, no_token if label == AUTH_OFF else token) for label, s in services.items())
        print(f"aisle: every service idle (start-up builds done) after {waited:.0f} s more")
        for tenant, queries, fs in (("fashion", fashion, facets), ("homedepot", hd, ())):
            sides = [
                Side(
                    TYPESENSE,
                    ts.port,
                    ts.proc.pid,
                    {"X-TYPESENSE-API-KEY": ts.api_key},
                    _typesense(engines, tenant, fs),
                )
            ]
            for label, service in services.items():
                headers = {} if label == AUTH_OFF else token[tenant]
                request = aisle_request(tenant, fs, quiet=label == QUIET)
                sides.append(Side(label, service.port, service.proc.pid, headers, request))
                # the last queries, then a query no word matches on 8 connections (each worker loads
                # MiniLM for such a query on its first one: about a second, which put 70-120 ms on the
                # p99 of the rows that met it in the measured runs)
                warm = [request(q, i)[1] for i, q in enumerate([*queries[-200:], *[NO_MATCH] * 16])]
                asyncio.run(get_many(service.port, ["/search"] * len(warm), 8, headers=headers, posts=warm))
                # the first searches start work of their own (the Home Depot ranker compiled by LLVM in a
                # background thread, seconds): measured once it is done
                wait_idle(service, no_token if label == AUTH_OFF else token)
            title = "fashion mix" if tenant == "fashion" else "Home Depot dev queries"
            summaries[tenant] = table(title, queries, sides)
        print("\nSummary (issue 43's figures; the rows above):")
        for tenant, rows in summaries.items():
            summary(tenant, rows)
        rss = "; ".join(f"{label} {worker_rss(s)}" for label, s in services.items())
        print(f"\naisle: resident memory after the bench, RSS/PSS MiB (parent, workers): {rss}")
    finally:
        for service in services.values():
            service.stop()
        if external is not None:
            external.stop()
    return engines


def _typesense(engines: Any, tenant: str, facets: tuple[str, ...]) -> Callable[[str, int], tuple[str, None]]:
    return lambda q, _i: (engines.typesense(tenant, q, 20, facets), None)
