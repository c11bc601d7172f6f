"""Google Retail backend benchmark: what ``GoogleRetailSearch`` adds over a bare HTTP call to Google.

Against the local stand-in of Google's REST endpoints (``tests/support/google_retail_standin.py``), in its
own process, holding the first products of the fashion demo catalog, so the figures are Aisle's side
only (translation, Google's client library, its REST transport) and never Google's own latency:

- ``GoogleRetailSearch.search`` (filters, two facets, a sort), p50/p99 (ms), 1 and 8 client threads;
- the same SearchRequest JSON posted with a bare ``requests.Session``, p50/p99, the floor;
- the difference of the two p50s: the backend's overhead per call;
- the backend's own CPU per search in-process (translate, encode, decode, translate back), which a busy
  shared machine inflates least.

Queries are the first words of product titles, each request different in query or page.
"""

from __future__ import annotations

import gzip
import json
import multiprocessing
import statistics
import threading
import time
from pathlib import Path
from typing import Any

ROUNDS = 300
CATALOG = 100  # small, so the stand-in's own (Python, unindexed) matching stays a small part of a call


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


def _run(threads: int, call: Any, requests_: list[Any]) -> list[float]:
    lat: list[float] = []
    lock = threading.Lock()
    per = len(requests_) // threads

    def worker(part: list[Any]) -> None:
        mine = []
        for req in part:
            start = time.perf_counter()
            call(req)
            mine.append((time.perf_counter() - start) * 1000)
        with lock:
            lat.extend(mine)

    pool = [
        threading.Thread(target=worker, args=(requests_[i * per : (i + 1) * per],)) for i in range(threads)
    ]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return lat


def main(data_dir: Path) -> None:
    try:
        from google.protobuf import json_format
    except ImportError:
        print("google extra not installed: skipped (pip install '.[google]')")
        return
    import requests
    from tests.support.google_retail_search import retail_product
    from tests.support.google_retail_standin import backend_config

    from aisle.core.crs_config import GoogleRetailBackendConfig
    from aisle.search.external.external_search_google import GoogleRetailSearch
    from aisle.search.external.google_translate import search_request
    from aisle.search.external.protocol import ExternalSearchRequest
    from aisle.search.model import FilterSpec

    path = data_dir / "fashion" / "products.jsonl.gz"
    if not path.exists():
        print(f"{path} missing: skipped")
        return
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for _, line in zip(range(CATALOG), lines, strict=False)]
    products = [retail_product(r) for r in rows]
    words = [str(r.get("name", "x")).split()[i % 3].lower() for i, r in enumerate(rows * 3)][:ROUNDS]
    price = FilterSpec(field="price", value={"gte": 1})
    reqs = [
        ExternalSearchRequest(
            query=w, filters=(price,), facets=("brand", "price"), sort="price_asc", offset=i % 3, timeout_s=5
        )
        for i, w in enumerate(words)
    ]
    # The stand-in in its own process: it does not share the clients' GIL.
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    server = ctx.Process(target=_serve, args=(products, child), daemon=True)
    server.start()
    url = parent.recv()
    try:
        config = {**backend_config(_Url(url), vision=False)}
        backend = GoogleRetailSearch(GoogleRetailBackendConfig.model_validate(config))
        session = requests.Session()
        endpoint = f"{url}/v2/{backend.placement}:search"

        def bare(req: ExternalSearchRequest) -> None:
            message = search_request(
                backend.placement, req.query, filters=req.filters, facets=req.facets, sort=req.sort
            )
            body = json_format.MessageToJson(type(message).pb(message))
            json.loads(session.post(endpoint, data=body, timeout=5).text)

        print(f"stand-in (own process) holds {len(products)} fashion products; {len(reqs)} searches per run")
        for threads in (1, 8):
            backend.search(reqs[0])  # warm the connection pools
            bare(reqs[0])
            raw = _run(threads, bare, reqs)
            lib = _run(threads, backend.search, reqs)
            print(
                f"{threads} thread(s): GoogleRetailSearch p50 {_pct(lib, 50):.2f} ms "
                f"p99 {_pct(lib, 99):.2f} ms; bare HTTP p50 {_pct(raw, 50):.2f} ms "
                f"p99 {_pct(raw, 99):.2f} ms; overhead p50 {_pct(lib, 50) - _pct(raw, 50):+.2f} ms"
            )
        browse = {"query": "", "pageSize": 10, "facetSpecs": [{"facetKey": {"key": "brands"}}]}
        answer = session.post(endpoint, data=json.dumps(browse), timeout=5).text
        backend.close()
    finally:
        parent.send("stop")
        server.join(timeout=5)
    _cpu(reqs, backend.placement, answer)


class _Url:
    def __init__(self, url: str) -> None:
        self.url = url


def _serve(products: list[dict[str, Any]], conn: Any) -> None:
    from tests.support.google_retail_standin import GoogleStandin

    with GoogleStandin(products) as standin:
        conn.send(standin.url)
        conn.recv()


def _cpu(reqs: list[Any], placement: str, answer: str) -> None:
    """The backend's own CPU per search, in-process: the request built and encoded as the REST
    transport does, and a recorded answer (10 results, a facet) decoded and translated back."""
    from google.cloud import retail_v2
    from google.protobuf import json_format

    from aisle.search.external.google_translate import search_page, search_request

    times = []
    for req in reqs:
        start = time.perf_counter()
        message = search_request(placement, req.query, filters=req.filters, facets=req.facets, sort=req.sort)
        json_format.MessageToJson(type(message).pb(message))
        response = retail_v2.SearchResponse()
        json_format.Parse(answer, type(response).pb(response), ignore_unknown_fields=True)
        search_page(response, req.facets)
        times.append((time.perf_counter() - start) * 1000)
    print(
        "backend CPU per search (translate, encode, decode, translate back): "
        f"p50 {_pct(times, 50):.3f} ms p99 {_pct(times, 99):.3f} ms"
    )
