"""The analytics service over HTTP: the reports of a known log, periods, CSV, the simulated label,
and its auth (scope analytics:read, tenant isolation)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path

import polars as pl
import pytest
from fastapi.testclient import TestClient
from tests.analytics.test_reports import LOG
from tests.support.auth import AuthKit
from tests.support.recs import write_tenant

from aisle.analytics.engine import AnalyticsEngine, SimulatedPeriod
from aisle.analytics.records import Answer, Outcome
from aisle.core.auth.scopes import ANALYTICS_READ, SEARCH_READ
from aisle.core.storage import BlobStore, open_blob_store
from aisle.services.analytics.app import create_app

PRODUCTS = pl.DataFrame({"id": ["p1", "p2"], "title": ["a shoe", "a hat"]})
PERIOD = {"from": "2026-11-20", "to": "2026-11-20"}


@pytest.fixture
def store(tmp_path: Path) -> BlobStore:
    store = open_blob_store(f"file://{tmp_path / 'bucket'}")
    for tenant in ("t", "other"):
        write_tenant(store, tenant, PRODUCTS)
    return store


@pytest.fixture
def kit(store: BlobStore) -> AuthKit:
    return AuthKit(store)


@pytest.fixture
def client(kit: AuthKit, store: BlobStore, tmp_path: Path) -> Iterator[TestClient]:
    settings = kit.settings(storage_url=f"file://{tmp_path / 'bucket'}", data_dir=tmp_path / "data")
    writer = AnalyticsEngine.from_settings(settings, store)
    for record in LOG:
        assert isinstance(record, Answer | Outcome)
        writer.record(record)
    writer.close()
    with TestClient(create_app(settings)) as c:
        c.headers["Authorization"] = f"Bearer {kit.token(['t'], [ANALYTICS_READ])}"
        yield c


def test_summary_and_reports(client: TestClient) -> None:
    resp = client.get("/analytics/summary", params={"tenant": "t", **PERIOD})
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert (body["from"], body["to"], body["simulated"]) == (
        "2026-11-20T00:00:00Z",
        "2026-11-21T00:00:00Z",
        None,
    )
    assert (body["searches"], body["visitors"], body["noResultSearches"]) == (4, 3, 1)
    assert (body["clickThroughRate"], body["conversionRate"], body["revenue"]) == (0.5, 0.25, 7.0)
    items = client.get("/analytics/searches", params={"tenant": "t", "limit": 2, **PERIOD}).json()["items"]
    assert [(r["query"], r["searches"], r["clicks"]) for r in items] == [("shoes", 2, 2), ("hat", 1, 0)]
    no_results = client.get("/analytics/searches/no-results", params={"tenant": "t", **PERIOD}).json()
    assert no_results["items"] == [{"query": "zzz", "searches": 1}]
    no_clicks = client.get("/analytics/searches/no-clicks", params={"tenant": "t", **PERIOD}).json()
    assert no_clicks["items"] == [{"query": "hat", "searches": 1}]
    positions = client.get("/analytics/positions", params={"tenant": "t", "depth": 2, **PERIOD}).json()
    assert [(p["position"], p["clicks"]) for p in positions["items"]] == [(1, 0), (2, 2)]
    recs = client.get("/analytics/recommendations", params={"tenant": "t", **PERIOD}).json()["items"]
    assert [(r["containerId"], r["revenue"]) for r in recs] == [("similar", 20.0)]
    rules = client.get("/analytics/rules", params={"tenant": "t", **PERIOD}).json()["items"]
    assert [(r["ruleId"], r["searches"]) for r in rules] == [("r1", 2)]
    models = client.get("/analytics/models", params={"tenant": "t", **PERIOD})
    assert models.status_code == 200 and models.json()["items"] == []  # the log's answer names no model
    daily = client.get("/analytics/daily", params={"tenant": "t", **PERIOD}).json()["items"]
    assert [(d["day"], d["searches"]) for d in daily] == [("2026-11-20", 4)]


def test_csv_export(client: TestClient) -> None:
    resp = client.get("/analytics/searches", params={"tenant": "t", "format": "csv", **PERIOD})
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/csv")
    lines = resp.text.splitlines()
    assert lines[0] == "query,searches,noResultSearches,clicks,clickThroughRate,conversions,revenue"
    assert lines[1] == "shoes,2,0,2,1.0,1,7.0" and len(lines) == 4
    summary = client.get("/analytics/summary", params={"tenant": "t", "format": "csv", **PERIOD}).text
    assert summary.splitlines()[1].startswith("4,3,1,0.25,0.5,0.25,7.0,")


@pytest.mark.parametrize(
    ("params", "status", "code"),
    [
        ({"from": "2026-11-21", "to": "2026-11-20"}, 400, "period_invalid"),
        ({"from": "2026-13-01"}, 400, "period_invalid"),
        ({"from": "2020-01-01", "to": "2026-01-01"}, 400, "period_invalid"),
        ({"from": "yesterday"}, 422, "validation_error"),
        ({"limit": 0}, 422, "validation_error"),
        ({"sort": "price"}, 422, "validation_error"),
        ({"lmit": 5}, 400, "unknown_parameter"),
    ],
)
def test_bad_input_is_a_clear_4xx(
    client: TestClient, params: dict[str, object], status: int, code: str
) -> None:
    resp = client.get("/analytics/searches", params={"tenant": "t", **params})
    assert resp.status_code == status, resp.text
    assert resp.json()["error"]["code"] == code


@pytest.mark.parametrize("report", ["summary", "daily", "searches", "searches/no-clicks", "rules"])
def test_an_inverted_period_is_refused_not_turned_into_a_day(client: TestClient, report: str) -> None:
    resp = client.get(
        f"/analytics/{report}", params={"tenant": "t", "from": "2026-11-20", "to": "2026-11-19"}
    )
    assert resp.status_code == 400, resp.text
    error = resp.json()["error"]
    assert error["code"] == "period_invalid"
    assert "2026-11-20" in error["message"] and "2026-11-19" in error["message"]
    document = client.get("/openapi.json").json()
    bad = document["paths"][f"/analytics/{report}"]["get"]["responses"]["400"]
    assert "`period_invalid`" in bad["description"] and "not before `to`" in bad["description"]


def test_unknown_tenant_is_404(client: TestClient, kit: AuthKit) -> None:
    token = kit.token(["nosuch"], [ANALYTICS_READ])
    resp = client.get(
        "/analytics/summary", params={"tenant": "nosuch"}, headers={"Authorization": f"Bearer {token}"}
    )
    assert resp.status_code == 404 and resp.json()["error"]["code"] == "tenant_not_found"


def test_scope_and_tenant_are_checked(client: TestClient, kit: AuthKit) -> None:
    no_scope = kit.token(["t"], [SEARCH_READ])
    resp = client.get(
        "/analytics/summary", params={"tenant": "t"}, headers={"Authorization": f"Bearer {no_scope}"}
    )
    assert resp.status_code == 403 and resp.json()["error"]["code"] == "insufficient_scope"
    resp = client.get("/analytics/summary", params={"tenant": "other"})
    assert resp.status_code == 403 and resp.json()["error"]["code"] == "tenant_forbidden"
    resp = client.get("/analytics/summary", params={"tenant": "t"}, headers={"Authorization": ""})
    assert resp.status_code == 401


def test_simulated_traffic_is_labelled(client: TestClient, store: BlobStore, tmp_path: Path) -> None:
    from aisle.core.config import Settings

    engine = AnalyticsEngine.from_settings(Settings(data_dir=tmp_path / "d"), store, record=False)
    engine.mark_simulated("t", SimulatedPeriod(date(2026, 10, 29), date(2026, 11, 25), "simulated shoppers"))
    body = client.get("/analytics/summary", params={"tenant": "t", **PERIOD}).json()
    assert body["simulated"] == {"from": "2026-10-29", "to": "2026-11-25", "note": "simulated shoppers"}
    # an A/B test's simulated visitors are a second source, named with their own period
    test = SimulatedPeriod(date(2026, 11, 12), date(2026, 11, 26), "simulated visitors", "A/B test “x”")
    engine.mark_simulated("t", test)
    body = client.get("/analytics/daily", params={"tenant": "t", **PERIOD}).json()
    assert [(s["source"], s["from"], s["to"]) for s in body["simulatedSources"]] == [
        ("demo traffic", "2026-10-29", "2026-11-25"),
        ("A/B test “x”", "2026-11-12", "2026-11-26"),
    ]
    assert (body["simulated"]["from"], body["simulated"]["to"]) == ("2026-10-29", "2026-11-26")
    assert "A/B test “x” (2026-11-12 to 2026-11-26): simulated visitors" in body["simulated"]["note"]
    engine.mark_simulated("t", test)  # marked again (a demo rebuilt): replaced, not listed twice
    assert len(engine.simulated_sources("t")) == 2


def test_a_marker_written_before_sources_were_named_reads_as_the_demo_traffic(
    client: TestClient, store: BlobStore
) -> None:
    from aisle.core import analytics_layout as layout
    from aisle.core.tenancy import Tenants

    old = b'{"from": "2026-10-29", "to": "2026-11-25", "note": "simulated shoppers"}'
    Tenants(store).scope("t").put(layout.SIMULATED, old)
    body = client.get("/analytics/summary", params={"tenant": "t", **PERIOD}).json()
    assert body["simulatedSources"] == [
        {"source": "demo traffic", "from": "2026-10-29", "to": "2026-11-25", "note": "simulated shoppers"}
    ]


def test_csv_cells_a_spreadsheet_would_run_are_quoted(kit: AuthKit, store: BlobStore, tmp_path: Path) -> None:
    settings = kit.settings(storage_url=f"file://{tmp_path / 'bucket'}", data_dir=tmp_path / "data")
    writer = AnalyticsEngine.from_settings(settings, store)
    writer.record(Answer("t", "x1", "search", LOG[0].at, (), 0, query='=HYPERLINK("http://evil","x")'))
    writer.close()
    with TestClient(create_app(settings)) as c:
        c.headers["Authorization"] = f"Bearer {kit.token(['t'], [ANALYTICS_READ])}"
        text = c.get("/analytics/searches/no-results", params={"tenant": "t", "format": "csv", **PERIOD}).text
    assert text.splitlines()[1] == '"\'=HYPERLINK(""http://evil"",""x"")",1'
