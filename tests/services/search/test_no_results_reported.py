"""Nonsense answers no results through the search service and lands in the analytics no-result report
(issue 43: a search that found 19,560 products never reached the merchandiser's first report)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi.testclient import TestClient
from tests.search.test_honest_no_results import NONSENSE

from aisle.core.config import Settings
from aisle.services.analytics.app import create_app as analytics_app
from aisle.services.search.app import create_app as search_app


def test_nonsense_searches_are_no_result_searches_in_the_report(demo_env: Any) -> None:
    settings = Settings(storage_url=demo_env.storage_url, data_dir=demo_env.data_dir, auth="off")
    with TestClient(search_app(settings)) as search:
        answers = [
            search.post("/search", json={"query": q, "tenant": "homedepot", "visitorId": f"nr-{k}"}).json()
            for k, q in enumerate(NONSENSE)
        ]
    assert [a["total"] for a in answers] == [0] * len(NONSENSE)
    normalized = {a["queryGraph"]["normalized"] for a in answers}
    today = datetime.now(UTC).date().isoformat()
    with TestClient(analytics_app(settings)) as analytics:
        resp = analytics.get(
            "/analytics/searches/no-results",
            params={"tenant": "homedepot", "from": today, "to": today, "limit": 100},
        )
    assert resp.status_code == 200, resp.text
    reported = {item["query"] for item in resp.json()["items"]}
    assert normalized <= reported, normalized - reported
