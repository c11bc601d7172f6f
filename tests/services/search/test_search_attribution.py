"""Every answer of the search service carries its own attribution token and is recorded for analytics:
POST and GET /search (the fast lane too), vector search, with the normalised query, the stage, the rules
that fired and the products in shown order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from fastapi.testclient import TestClient

from aisle.analytics.log import ParquetLog
from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.services.search.app import create_app


def _rows(settings: Settings, tenant: str, tmp: Path) -> dict[str, dict[str, Any]]:
    log = ParquetLog(open_blob_store(settings.storage_url), tmp / "cache")
    days = log.days(tenant, "answers")
    files = log.files(tenant, "answers", days[0], days[-1]) if days else []
    return {r["token"]: r for f in files for r in pq.read_table(f).to_pylist()}


def test_search_answers_are_tokened_and_recorded(demo_env: Any, tmp_path: Path) -> None:
    settings = Settings(storage_url=demo_env.storage_url, data_dir=demo_env.data_dir, auth="off")
    with TestClient(create_app(settings)) as client:
        posted = client.post(
            "/search",
            json={"query": "Red NIKE shoes", "tenant": "fashion", "size": 5, "visitorId": "attr-v1",
                  "filters": [{"field": "gender", "value": "Men"}]},
        ).json()  # fmt: skip
        got = client.get("/search", params={"tenant": "fashion", "q": "red nike shoes", "size": 5}).json()
        again = client.get("/search", params={"tenant": "fashion", "q": "red nike shoes", "size": 5}).json()
        nothing = client.post("/search", json={"query": "qqqzzzxxx", "tenant": "fashion"}).json()
        metrics = client.get("/metrics").text
    tokens = [posted["attributionToken"], got["attributionToken"], again["attributionToken"]]
    assert len(set(tokens)) == 3 and all(0 < len(t) <= 128 for t in tokens)
    assert 'aisle_analytics_records_total{outcome="recorded",service="search"} 4.0' in metrics
    rows = _rows(settings, "fashion", tmp_path)  # the service stopped: its buffer is written
    row = rows[posted["attributionToken"]]
    assert row["kind"] == "search" and row["visitor_id"] == "attr-v1"
    assert row["query"] == posted["queryGraph"]["normalized"] == "red nike shoes"
    assert row["product_ids"] == [p["id"] for p in posted["products"]] and row["total"] == posted["total"]
    assert row["stage"] == posted["queryGraph"]["stage"] and row["sort"] == "relevance"
    assert '"field":"gender"' in row["filters"]
    assert row["latency_ms"] == posted["queryGraph"]["took_ms"]  # the answer's own timing, as it said
    assert rows[got["attributionToken"]]["product_ids"] == [p["id"] for p in got["products"]]
    empty = rows[nothing["attributionToken"]]
    assert empty["total"] == 0 and empty["product_ids"] == []  # a no-result search, counted as one
