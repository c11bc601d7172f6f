"""A known day of shoppers replayed through the running services, and every analytics answer checked
exactly: searches (their tokens), a search process stopped with SIGTERM while its answers are still
buffered, clicks with positions (one sent twice), purchases with a token, without one inside the
attribution window and without one outside it, and recommendations through predict.

Real processes (uvicorn): search and predict record their answers; the edit service stores the events
with their outbox; the analytics service drains the outbox and answers the reports. No wall-clock bound
is asserted: the test polls until analytics has the figures, and fails only when it never does.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import polars as pl
import pytest
from tests.support.recs import write_tenant
from tests.support.sockets import free_port

from aisle.analytics.log import ParquetLog
from aisle.core.storage import open_blob_store
from aisle.core.tenant_config import Attribute, AttributeRole, AttributeType

pytestmark = pytest.mark.slow  # starts the services as processes

T = {"tenant": "shop"}
ATTRIBUTES = [
    Attribute(name="title", type=AttributeType.text, role=AttributeRole.title, searchable=True),
    Attribute(name="price", type=AttributeType.number, role=AttributeRole.price, sortable=True),
]
PRODUCTS = pl.DataFrame(
    {
        "id": ["s1", "s2", "s3", "h1"],
        "title": ["red running shoe", "blue running shoe", "green walking shoe", "straw hat"],
        "price": [50.0, 60.0, 70.0, 20.0],
    }
)
HANG_S = 120.0


def _start(module: str, env: dict[str, str], log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    cmd = [sys.executable, "-m", "uvicorn", "--factory", f"{module}:create_app", "--host", "127.0.0.1",
           "--port", str(port), "--log-level", "warning"]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    start = time.monotonic()
    while True:
        assert proc.poll() is None, f"{module} exited:\n{log.read_text()[-3000:]}"
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        assert time.monotonic() - start < HANG_S, f"{module} did not start:\n{log.read_text()[-3000:]}"
        time.sleep(0.2)


def _stop(proc: subprocess.Popen[bytes]) -> int:
    proc.send_signal(signal.SIGTERM)
    return proc.wait(timeout=60)


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    bucket = tmp_path / "bucket"
    write_tenant(open_blob_store(f"file://{bucket}"), "shop", PRODUCTS, attributes=ATTRIBUTES)
    yield {
        **os.environ,
        "AISLE_STORAGE_URL": f"file://{bucket}",
        "AISLE_DATA_DIR": str(tmp_path / "data"),
        "AISLE_AUTH": "off",
        "AISLE_ANALYTICS_FLUSH_SECONDS": "1",
    }


def _search(url: str, query: str, visitor: str) -> dict[str, Any]:
    answer = httpx.post(
        f"{url}/search", json={"query": query, "tenant": "shop", "visitorId": visitor}, timeout=30
    )
    assert answer.status_code == 200, answer.text
    return answer.json()  # type: ignore[no-any-return]


def _until(url: str, path: str, params: dict[str, str], done: Any) -> Any:
    start = time.monotonic()
    while True:
        body = httpx.get(f"{url}{path}", params={**T, **params}, timeout=30).json()
        if done(body):
            return body
        assert time.monotonic() - start < HANG_S, f"analytics never showed it: {body}"
        time.sleep(0.3)


def test_a_known_day_through_the_services(env: dict[str, str], tmp_path: Path) -> None:
    # the search service buffers its answers for an hour: only SIGTERM writes them
    search, search_url = _start("aisle.services.search.app", {**env, "AISLE_ANALYTICS_FLUSH_SECONDS": "3600"},
                                tmp_path / "search.log")  # fmt: skip
    edit, edit_url = _start("aisle.services.edit.app", env, tmp_path / "edit.log")
    analytics, analytics_url = _start("aisle.services.analytics.app", env, tmp_path / "analytics.log")
    try:
        shoes = _search(search_url, "running shoe", "v1")  # 2 results
        again = _search(search_url, "Running  SHOES", "v2")  # normalised to "running shoes"
        nothing = _search(search_url, "qqqxxz", "v3")  # no results
        hat = _search(search_url, "straw hat", "v1")
        assert len(shoes["products"]) >= 2 and again["products"] and hat["products"]
        assert nothing["total"] == 0
        # SIGTERM while every answer is still in the buffer: uvicorn shuts the app down (its lifespan
        # writes the buffer), then re-raises the signal, so the exit status is the signal's
        assert _stop(search) in (0, -signal.SIGTERM)
        log = ParquetLog(open_blob_store(env["AISLE_STORAGE_URL"]), tmp_path / "cache")
        day = log.days("shop", "answers")
        assert day and len(log.files("shop", "answers", day[0], day[-1])) >= 1  # written at shutdown
        now = time.time()
        first, second = shoes["products"][0]["id"], shoes["products"][1]["id"]
        top = again["products"][0]["id"]
        click = {"visitorId": "v1", "eventType": "click", "productId": second, "timestamp": now + 5,
                 "attributionToken": shoes["attributionToken"], "position": 2, "eventId": "c-1"}  # fmt: skip
        events = [
            click,
            click,  # sent twice: counted once
            {"visitorId": "v2", "eventType": "click", "productId": top, "timestamp": now + 6,
             "attributionToken": again["attributionToken"], "position": 1, "eventId": "c-2"},
            # a purchase with the token: counts for that answer
            {"visitorId": "v2", "eventType": "purchase", "productId": top, "timestamp": now + 30,
             "attributionToken": again["attributionToken"], "price": 60.0, "quantity": 2},
            # no token, v1 within the hour: the latest answer to v1 showing it is `shoes` ("straw hat" came
            # later but did not show a shoe)
            {"visitorId": "v1", "eventType": "purchase", "productId": first, "timestamp": now + 600,
             "price": 50.0},
            # no token, two hours after: credited to nothing
            {"visitorId": "v1", "eventType": "purchase", "productId": second, "timestamp": now + 7200,
             "price": 1000.0},
            {"visitorId": "v3", "eventType": "view", "productId": "h1", "timestamp": now + 7},
        ]  # fmt: skip
        accepted = httpx.post(f"{edit_url}/events", params=T, json={"events": events}, timeout=30)
        assert accepted.status_code == 202 and accepted.json()["accepted"] == len(events), accepted.text
        resent = httpx.post(f"{edit_url}/events", params=T, json=click, timeout=30)  # a client's retry
        assert resent.status_code == 202

        summary = _until(analytics_url, "/analytics/summary", {}, lambda b: b.get("revenue") == 170.0)
        assert (summary["searches"], summary["visitors"], summary["noResultSearches"]) == (4, 3, 1)
        assert summary["noResultRate"] == 0.25
        assert summary["clickThroughRate"] == 0.5  # shoes and again were clicked, of 4
        assert summary["conversionRate"] == 0.5  # again (token) and shoes (the hour rule)
        assert summary["revenue"] == 170.0  # 60 x 2 + 50; the purchase two hours on counts nowhere
        assert summary["averageClickPosition"] == 1.5
        queries = {
            r["query"]: r for r in httpx.get(f"{analytics_url}/analytics/searches", params=T).json()["items"]
        }
        assert queries[shoes["queryGraph"]["normalized"]]["clicks"] >= 1
        assert queries["qqqxxz"]["noResultSearches"] == 1
        no_results = httpx.get(f"{analytics_url}/analytics/searches/no-results", params=T).json()["items"]
        assert no_results == [{"query": "qqqxxz", "searches": 1}]
        no_clicks = httpx.get(f"{analytics_url}/analytics/searches/no-clicks", params=T).json()["items"]
        assert no_clicks == [{"query": hat["queryGraph"]["normalized"], "searches": 1}]
        positions = httpx.get(f"{analytics_url}/analytics/positions", params={**T, "depth": 3}).json()[
            "items"
        ]
        assert [(p["position"], p["clicks"]) for p in positions] == [(1, 1), (2, 1), (3, 0)]
    finally:
        for proc in (search, edit, analytics):
            if proc.poll() is None:
                _stop(proc)
