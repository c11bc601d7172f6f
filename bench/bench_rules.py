"""Merchandising rules benchmarks: search latency with 20 active rules, and concurrent rule edits.

Figures printed (issue 3, "Measured, reported in your closing note"):
- server-side search latency (Server-Timing) on fashion with query understanding, 3 facets, one worker:
  p50/p99 with no rules, then with 20 active rules of a realistic mix (ms);
- the cost of checking a tenant's rules for changes on every request (µs, in process);
- 20 clients replacing one rule at once through the rules service: landed writes, 409s, lost updates
  (a landed version whose stored body is not its writer's), once all with the same version and once
  retrying until each lands.
"""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import orjson

from aisle.search.query import SearchQuery
from aisle.services.common.timing import app_ms
from bench.bench_search import FACETS, fashion_queries, pct
from bench.search_server import ServiceProcess

T = {"tenant": "fashion"}
WRITERS = 20


def _setup(tmp: Path, data_dir: Path) -> dict[str, str]:
    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.demo import import_demo_catalogs

    url = f"file://{tmp / 'bucket'}"
    tenants = Tenants(open_blob_store(url), ttl=0)
    if not import_demo_catalogs(tenants, tmp / "data", data_dir, only=("fashion",), echo=print):
        raise FileNotFoundError(f"fashion data missing under {data_dir}")
    return {"AISLE_STORAGE_URL": url, "AISLE_DATA_DIR": str(tmp / "data"), "AISLE_AUTH": "off"}


def twenty_rules() -> list[dict[str, Any]]:
    """A realistic mix: boosts and buries by category, pins, hides, filters, redirects, rewrites, regex,
    a user-group rule, a scheduled one, a disabled one."""

    def rule(
        name: str, match: str, value: str | None, actions: list[dict[str, Any]], **kw: Any
    ) -> dict[str, Any]:
        query = {"match": match, **({"value": value} if value is not None else {})}
        return {
            "name": name,
            "conditions": {"query": query, **kw.pop("conditions", {})},
            "actions": actions,
            "appliesToAllQueries": match == "any",  # sitewide rules are saved deliberately
            **kw,
        }

    def boost(field: str, value: Any, weight: float = 20, kind: str = "boost") -> dict[str, Any]:
        return {"type": kind, "condition": [{"field": field, "value": value}], "weight": weight}

    return [
        rule("Nike on shoes", "contains", "shoes", [boost("brand", "Nike", 25)], priority=10),
        rule("Puma on tshirts", "contains", "tshirts", [boost("brand", "Puma")]),
        rule("Titan on watches", "contains", "watches", [boost("brand", "Titan", 30)], priority=5),
        rule("Levis on jeans", "contains", "jeans", [boost("brand", "Levis")]),
        rule("Bury winter shirts", "contains", "shirts", [boost("season", "Winter", 15, "bury")]),
        rule("Bury pricey tees", "prefix", "tshirt", [boost("price", {"gte": 3000}, 15, "bury")]),
        rule(
            "Pin on shoes",
            "contains",
            "shoes",
            [{"type": "pin", "items": [{"productId": "15970", "position": 3}]}],
        ),
        rule(
            "Pin on watch",
            "exact",
            "watch",
            [{"type": "pin", "items": [{"productId": "1164", "position": 1}]}],
        ),
        rule(
            "Pins on bags",
            "contains",
            "bags",
            [
                {
                    "type": "pin",
                    "items": [{"productId": "10268", "position": 1}, {"productId": "10269", "position": 4}],
                }
            ],
        ),
        rule("Hide recalled", "any", None, [{"type": "hide", "productIds": ["10000", "10001", "10002"]}]),
        rule("Hide on watches", "contains", "watches", [{"type": "hide", "productIds": ["1163", "1165"]}]),
        rule(
            "Sale",
            "exact",
            "sale",
            [{"type": "filter", "filters": [{"field": "price", "value": {"lt": 1000}}]}],
        ),
        rule(
            "Women",
            "prefix",
            "women",
            [{"type": "filter", "filters": [{"field": "gender", "value": "Women"}]}],
        ),
        rule("Help", "exact", "help", [{"type": "redirect", "url": "/help"}]),
        rule("Returns", "regex", "^returns?( policy)?$", [{"type": "redirect", "url": "/returns"}]),
        rule("Sneakers", "exact", "sneakers", [{"type": "rewrite", "query": "sports shoes"}]),
        rule("Colours first", "regex", "^(red|blue|black|white) ", [boost("usage", "Casual", 10)]),
        rule("VIP", "any", None, [boost("price", {"gte": 2000}, 10)], conditions={"userGroup": "vip"}),
        rule(
            "Black Friday",
            "any",
            None,
            [boost("brand", "Nike", 40)],
            conditions={"start": "2030-11-27T00:00:00Z"},
        ),
        rule("Paused", "contains", "shoes", [boost("brand", "Adidas", 40)], enabled=False),
    ]


def latency(url: str, queries: list[str], rounds: int = 3) -> list[float]:
    server = []
    with httpx.Client(base_url=url, timeout=10) as http:
        for q in queries[:50]:  # warm-up
            http.post("/search", json={"query": q, "tenant": "fashion", "facets": FACETS})
        for _ in range(rounds):
            for q in queries:
                resp = http.post("/search", json={"query": q, "tenant": "fashion", "facets": FACETS})
                resp.raise_for_status()
                server.append(app_ms(resp.headers["server-timing"]))
    return server


def paired_overhead(env: dict[str, str], queries: list[str]) -> tuple[float, float, float, float]:
    """In process, each query with no rules and with the 20 rules, best of 3 each, interleaved (so the
    shared machine's load cancels out). Returns (mean without, mean with, median and p90 of the
    per-query difference), in ms."""
    from datetime import UTC, datetime

    from aisle.core.storage import open_blob_store
    from aisle.core.tenancy import Tenants
    from aisle.search.indexes import IndexRegistry
    from aisle.search.pipeline import SearchPipeline, default_stages
    from aisle.search.rules.book import RuleBook
    from aisle.search.rules.model import Rule
    from aisle.search.stages.rules import FixedRules

    tenants = Tenants(open_blob_store(env["AISLE_STORAGE_URL"]))
    index, config = (
        IndexRegistry(tenants, Path(env["AISLE_DATA_DIR"])).get("fashion"),
        tenants.config("fashion"),
    )
    now = datetime.now(UTC)
    rules = [
        Rule.model_validate({**doc, "id": f"r{i}", "version": 1, "createdAt": now, "updatedAt": now})
        for i, doc in enumerate(twenty_rules())
    ]
    without = SearchPipeline(default_stages(rules=FixedRules(RuleBook([]))))
    with_rules = SearchPipeline(default_stages(rules=FixedRules(RuleBook(rules))))
    a, b = [], []
    for q in queries:
        ta, tb = [], []
        for _ in range(3):
            for pipeline, times in ((without, ta), (with_rules, tb)):
                start = time.perf_counter()
                pipeline.search(index, config, SearchQuery(q, facets=FACETS))
                times.append((time.perf_counter() - start) * 1000)
        a.append(min(ta))
        b.append(min(tb))
    diffs = sorted(y - x for x, y in zip(a, b, strict=True))
    return statistics.mean(a), statistics.mean(b), statistics.median(diffs), pct(diffs, 90)


def check_cost(storage_url: str, n: int = 20_000) -> float:
    """µs per ``RuleBooks.book`` call with nothing changed (what every search pays)."""
    from aisle.core.storage import open_blob_store
    from aisle.search.rules.book import RuleBooks

    books = RuleBooks(open_blob_store(storage_url))
    assert len(books.book("fashion")) >= 19
    start = time.perf_counter()
    for _ in range(n):
        books.book("fashion")
    return (time.perf_counter() - start) / n * 1e6


def concurrent_edits(url: str, storage_url: str) -> None:
    from aisle.core.storage import open_blob_store
    from aisle.core.storage.revisions import RevisionLog
    from aisle.core.tenancy import tenant_scope

    log = RevisionLog(tenant_scope(open_blob_store(storage_url), "fashion"), "rules")

    def body(name: str, version: int) -> dict[str, Any]:
        return {
            "name": name,
            "version": version,
            "conditions": {"query": {"match": "exact", "value": name}},
            "actions": [{"type": "redirect", "url": f"/{name}"}],
        }

    with httpx.Client(base_url=url, timeout=30, limits=httpx.Limits(max_connections=WRITERS)) as http:
        r = http.post(
            "/rules",
            params=T,
            json={
                "id": "hot",
                "name": "start",
                "conditions": {"query": {"match": "exact", "value": "start"}},
                "actions": [{"type": "hide", "productIds": ["1"]}],
            },
        )
        r.raise_for_status()
        barrier = threading.Barrier(WRITERS)

        def once(n: int) -> tuple[int, int | None]:
            barrier.wait()
            resp = http.put("/rules/hot", params=T, json=body(f"once{n}", 1))
            return resp.status_code, resp.json()["rule"]["version"] if resp.status_code == 200 else None

        with ThreadPoolExecutor(WRITERS) as pool:
            results = list(pool.map(once, range(WRITERS)))
        _report("same version", results, [f"once{n}" for n in range(WRITERS)], log)

        def retrying(n: int) -> tuple[int, int | None, int]:
            conflicts = 0
            barrier.wait()
            while True:
                version = http.get("/rules/hot", params=T).json()["version"]
                resp = http.put("/rules/hot", params=T, json=body(f"retry{n}", version))
                if resp.status_code == 200:
                    return 200, resp.json()["rule"]["version"], conflicts
                if resp.status_code != 409:
                    return resp.status_code, None, conflicts
                conflicts += 1

        with ThreadPoolExecutor(WRITERS) as pool:
            out = list(pool.map(retrying, range(WRITERS)))
        _report(
            "retry until landed",
            [(s, v) for s, v, _ in out],
            [f"retry{n}" for n in range(WRITERS)],
            log,
            conflicts=sum(c for _, _, c in out),
        )


def _report(
    label: str,
    results: list[tuple[int, int | None]],
    names: list[str],
    log: Any,
    conflicts: int | None = None,
) -> None:
    landed = [
        (v, name) for (status, v), name in zip(results, names, strict=True) if status == 200 and v is not None
    ]
    rejected = sum(1 for status, _ in results if status == 409)
    other = sum(1 for status, _ in results if status not in (200, 409))
    lost = sum(
        1 for v, name in landed if orjson.loads(log.read(log.revision_path("hot", v)))["body"]["name"] != name
    )
    lost += len(landed) - len({v for v, _ in landed})  # two writers reported the same version
    silent = WRITERS - len(landed) - rejected - other
    extra = f", 409s along the way {conflicts}" if conflicts is not None else ""
    print(
        f"concurrent edits, {WRITERS} clients ({label}): landed {len(landed)}, 409 {rejected}{extra}, "
        f"other {other}, lost updates {lost + silent}, final version {log.latest('hot')[0]}"
    )


def main(data_dir: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="aisle-bench-rules-") as tmpdir:
        tmp = Path(tmpdir)
        env = _setup(tmp, data_dir)
        queries = fashion_queries(data_dir)
        queries += ["sneakers", "sale", "help", "returns", "watch", "women shoes", "red tshirts"] * 3
        search = ServiceProcess("aisle.services.search.app", env, workers=1)
        rules = ServiceProcess("aisle.services.rules.app", env, workers=1)
        try:
            search.wait_ready()
            rules.wait_ready()
            base = latency(search.url, queries)
            print(
                f"fashion search, query understanding, 3 facets, no rules, {len(base)} requests: "
                f"server-side p50 {statistics.median(base):.2f} ms, p99 {pct(base, 99):.2f} ms"
            )
            for doc in twenty_rules():
                r = httpx.post(rules.url + "/rules", params=T, json=doc, timeout=30)
                r.raise_for_status()
            with httpx.Client(base_url=search.url) as http:
                fired = [
                    len(
                        http.post("/search", json={"query": q, "tenant": "fashion"}).json()["queryGraph"][
                            "rules"
                        ]
                    )
                    for q in queries
                ]
            with_rules = latency(search.url, queries)
            print(
                f"fashion search, query understanding, 3 facets, 20 rules ({sum(1 for f in fired if f)} of "
                f"{len(queries)} queries fire a rule, {statistics.mean(fired):.1f} rules per query), "
                f"{len(with_rules)} requests: server-side p50 {statistics.median(with_rules):.2f} ms, "
                f"p99 {pct(with_rules, 99):.2f} ms"
            )
            a, b, med, p90 = paired_overhead(env, queries)
            print(
                f"rules overhead in process (best of 3, paired per query): mean {a:.2f} ms without, "
                f"{b:.2f} ms with 20 rules; difference median {med:+.3f} ms, p90 {p90:+.3f} ms"
            )
            cost = check_cost(env["AISLE_STORAGE_URL"])
            print(f"rule change check per search (RuleBooks.book, nothing changed): {cost:.1f} µs")
            concurrent_edits(rules.url, env["AISLE_STORAGE_URL"])
        finally:
            search.stop()
            rules.stop()
