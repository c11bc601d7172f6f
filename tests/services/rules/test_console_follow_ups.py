"""Guided search's figures over HTTP (issue 33): ``GET /analytics/searches/follow-ups`` (JSON and CSV)
and the console's Analytics page table of questions asked and answered per query."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from fastapi.testclient import TestClient
from tests.analytics.test_follow_up_reports import LOG
from tests.services.rules.test_console_analytics import PERIOD, _sign_in
from tests.support.auth import AuthKit, serve
from tests.support.recs import write_tenant

from aisle.analytics.engine import AnalyticsEngine
from aisle.core.auth.scopes import ANALYTICS_READ, SEARCH_READ
from aisle.core.storage import open_blob_store


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, AuthKit, str]]:
    from aisle.services.analytics.app import create_app as analytics_app
    from aisle.services.rules.app import create_app as rules_app

    tmp = tmp_path_factory.mktemp("console-follow-ups")
    store = open_blob_store(f"file://{tmp / 'bucket'}")
    write_tenant(store, "t", pl.DataFrame({"id": ["p1"], "title": ["a shirt"]}))
    kit = AuthKit(store)
    base = {"storage_url": f"file://{tmp / 'bucket'}", "data_dir": Path(tmp / "data")}
    writer = AnalyticsEngine.from_settings(kit.settings(**base), store)
    for record in LOG:
        writer.record(record)
    writer.close()
    with (
        serve(analytics_app(kit.settings(**base))) as analytics,
        TestClient(rules_app(kit.settings(**base, analytics_url=analytics))) as client,
    ):
        yield client, kit, analytics


def test_the_report_over_http(env: tuple[TestClient, AuthKit, str]) -> None:
    import httpx

    _, kit, analytics = env
    headers = {"Authorization": f"Bearer {kit.token(['t'], [ANALYTICS_READ])}"}
    params = {"tenant": "t", "from": "2026-11-20", "to": "2026-11-20"}
    body = httpx.get(f"{analytics}/analytics/searches/follow-ups", params=params, headers=headers).json()
    assert [(r["query"], r["asked"], r["answered"], r["attribute"]) for r in body["items"]] == [
        ("shirts", 3, 2, "color"),
        ("watches", 1, 0, "brand"),
    ]
    csv = httpx.get(
        f"{analytics}/analytics/searches/follow-ups", params={**params, "format": "csv"}, headers=headers
    )
    assert csv.text.splitlines()[0] == "query,searches,asked,askRate,answered,answerRate,attribute"


def test_the_console_shows_questions_per_query(env: tuple[TestClient, AuthKit, str]) -> None:
    client, kit, _ = env
    _sign_in(client, kit.token(["t"], [SEARCH_READ, ANALYTICS_READ]))
    page = client.get(f"/console/t/analytics?{PERIOD}")
    assert page.status_code == 200, page.text
    table = page.text[page.text.index('data-testid="follow-ups"') :]
    table = table[: table.index("</table>")]
    rows = re.findall(r"<tr><td><bdi>(.*?)</bdi></td>(.*?)</tr>", table)
    assert [q for q, _ in rows] == ["shirts", "watches"]
    cells = re.findall(r"<td>(.*?)</td>", rows[0][1])
    assert cells[:5] == ["4", "3", "75.0%", "2", "66.7%"] and "color" in cells[5]
    export = client.get(f"/console/t/analytics/export/searches/follow-ups.csv?{PERIOD}")
    assert export.status_code == 200 and export.text.splitlines()[1].startswith("shirts,4,3,0.75,2,")
