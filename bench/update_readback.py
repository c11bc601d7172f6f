"""Acknowledged writes lost: every acknowledged final value read back, one product at a time and by search.

By id: ``GET /products/{id}`` (Aisle) or ``GET documents/{id}`` (Typesense) for every product written,
each field compared with the last value acknowledged for it (numbers to 1e-6, relative). By search:
every final price (unique in the run, :mod:`bench.update_lag`) searched for, 100 a search as a filter of
the exact prices, and each product must come back holding its own; every changed title searched for by
its fresh word. A product is lost when either read misses its value; products whose last write was not
acknowledged (a refused batch) are left out and counted apart. A value not found by search is searched
for again each second for up to ``settle_s`` (a write acknowledged is searchable only some time later:
the last seconds of a stream may still be on their way); ``settled_s`` says how long that took.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import httpx

from bench.catalog_endpoints import Endpoint
from bench.http_load import get_many


@dataclass
class Readback:
    """Products checked, values missing by id, by search, the searches or reads that failed, and the
    seconds until search found every value it finally found."""

    products: int
    lost_by_id: int
    lost_by_search: int
    failed_reads: int
    settled_s: float


def _same(stored: Any, expected: Any) -> bool:
    if isinstance(expected, float) and isinstance(stored, int | float):
        return abs(float(stored) - expected) <= 1e-6 * max(1.0, abs(expected))
    return bool(stored == expected)


def _by_id(endpoint: Endpoint, tenant: str, finals: dict[str, dict[str, Any]]) -> tuple[int, int]:
    ids = sorted(finals)
    paths = [endpoint.product_path(tenant, pid) for pid in ids]
    got = asyncio.run(get_many(endpoint.port, paths, 8, headers=endpoint.headers, keep_bodies=True))
    lost = 0
    for pid, body in zip(ids, got.bodies, strict=True):
        try:
            stored = endpoint.stored(body)
        except (ValueError, KeyError):
            lost += 1
            continue
        lost += not all(_same(stored.get(k), v) for k, v in finals[pid].items())
    return lost, got.failed


def _by_price(endpoint: Endpoint, tenant: str, finals: dict[str, dict[str, Any]]) -> tuple[set[str], int]:
    priced = sorted((v["price"], pid) for pid, v in finals.items() if "price" in v)
    chunks = [priced[i : i + 100] for i in range(0, len(priced), 100)]
    if not chunks:
        return set(), 0
    requests = [endpoint.prices_request(tenant, [p for p, _ in chunk]) for chunk in chunks]
    paths = [path for path, _ in requests]
    posts = [body for _, body in requests if body is not None] or None
    got = asyncio.run(
        get_many(endpoint.port, paths, 4, headers=endpoint.headers, keep_bodies=True, posts=posts)
    )
    missing = set()
    for chunk, body in zip(chunks, got.bodies, strict=True):
        try:
            seen = {(str(h.get("id")), float(h.get("price") or 0)) for h in endpoint.hits(body)}
        except (ValueError, KeyError):
            seen = set()
        missing |= {pid for price, pid in chunk if (pid, price) not in seen}
    return missing, got.failed


def _by_title(endpoint: Endpoint, tenant: str, finals: dict[str, dict[str, Any]]) -> tuple[set[str], int]:
    missing, failed = set(), 0
    for pid, fields in finals.items():
        if "title" not in fields:
            continue
        word = fields["title"].rsplit(" ", 1)[1]
        try:
            hits = endpoint.hits(endpoint.ask(endpoint.search_request(tenant, word)))
        except (httpx.HTTPError, ValueError, KeyError):
            failed += 1
            hits = []
        if not any(str(h.get("id")) == pid for h in hits):
            missing.add(pid)
    return missing, failed


def _by_search(endpoint: Endpoint, tenant: str, finals: dict[str, dict[str, Any]]) -> tuple[set[str], int]:
    by_price, failed_price = _by_price(endpoint, tenant, finals)
    by_title, failed_title = _by_title(endpoint, tenant, finals)
    return by_price | by_title, failed_price + failed_title


def readback(
    endpoint: Endpoint, tenant: str, finals: dict[str, dict[str, Any]], *, settle_s: float
) -> Readback:
    """Read every acknowledged final value back by id and by search (module docstring)."""
    lost_id, failed = _by_id(endpoint, tenant, finals)
    start = time.perf_counter()
    missing, failed_search = _by_search(endpoint, tenant, finals)
    settled = 0.0
    while missing and time.perf_counter() - start < settle_s:
        time.sleep(1.0)
        missing, more = _by_search(endpoint, tenant, {pid: finals[pid] for pid in missing})
        failed_search += more
        settled = time.perf_counter() - start
    return Readback(len(finals), lost_id, len(missing), failed + failed_search, settled)
