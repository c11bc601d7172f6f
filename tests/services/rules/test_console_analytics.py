"""The console's Analytics page over HTTP: figures from the analytics service, the simulated label,
the no-result query's "make a rule" link, CSV export, and the scope it needs."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import polars as pl
import pytest
from fastapi.testclient import TestClient
from tests.analytics.test_reports import LOG, T0, _event, _search
from tests.support.auth import AuthKit, serve
from tests.support.recs import write_tenant

from aisle.analytics.engine import AnalyticsEngine, SimulatedPeriod
from aisle.core.auth.scopes import ANALYTICS_READ, RULES_WRITE, SEARCH_READ
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants

PERIOD = "from=2026-11-20&to=2026-11-20"
NOW = T0 + 5 * 86400 + 7200  # 2026-11-25 12:00 UTC, the analytics service's clock: that day is not over


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, AuthKit]]:
    from aisle.services.analytics.app import create_app as analytics_app
    from aisle.services.rules.app import create_app as rules_app

    tmp = tmp_path_factory.mktemp("console-analytics")
    store = open_blob_store(f"file://{tmp / 'bucket'}")
    write_tenant(store, "t", pl.DataFrame({"id": ["p1"], "title": ["a shoe"]}))
    config = Tenants(store).config("t").global_  # a German shop: figures read 25,0 % and 7,00 €
    german = config.model_copy(update={"locale": "de-DE", "currency": "EUR"})
    Tenants(store).write_config("t", {"global_configuration.json": german})
    kit = AuthKit(store)
    base = {"storage_url": f"file://{tmp / 'bucket'}", "data_dir": Path(tmp / "data")}
    writer = AnalyticsEngine.from_settings(kit.settings(**base), store)
    today = _search("d1", "v5", "boots", ["p1"], NOW - 3600)  # today's first search
    day_before = [  # the previous period of PERIOD: two searches, one clicked, the summary's changes
        _search("y1", "v6", "shoes", ["p1"], T0 - 86400),
        _search("y2", "v7", "boots", ["p1"], T0 - 86400 + 60),
        _event("yc", "click", "v6", "p1", T0 - 86400 + 5, attribution_token="y1", position=1),
    ]
    page_load = _search("b1", "v4", "", ["p1"], T0 + 300)  # no query
    for record in [*LOG, page_load, today, *day_before]:
        writer.record(record)
    writer.close()
    writer.mark_simulated("t", SimulatedPeriod(date(2026, 11, 20), date(2026, 11, 20), "test shoppers"))
    visitors = SimulatedPeriod(date(2026, 11, 19), date(2026, 11, 20), "test visitors", "A/B test “hybrid”")
    writer.mark_simulated("t", visitors)
    with (
        serve(analytics_app(kit.settings(**base), clock=lambda: NOW)) as analytics,
        TestClient(rules_app(kit.settings(**base, analytics_url=analytics))) as client,
    ):
        yield client, kit


def _sign_in(client: TestClient, token: str) -> None:
    client.cookies.clear()
    page = client.get("/console/login")
    nonce = re.search(r'name="nonce" value="([0-9a-f]+)"', page.text)
    assert nonce
    resp = client.post(
        "/console/login", data={"nonce": nonce.group(1), "token": token}, follow_redirects=False
    )
    assert resp.status_code == 303, resp.text


def test_page_shows_the_figures_and_the_simulated_label(env: tuple[TestClient, AuthKit]) -> None:
    client, kit = env
    _sign_in(client, kit.token(["t"], [SEARCH_READ, RULES_WRITE, ANALYTICS_READ]))
    page = client.get(f"/console/t/analytics?{PERIOD}")
    assert page.status_code == 200, page.text
    text = page.text
    assert 'data-testid="simulated"' in text
    # every simulated source is named with its own period: the demo's traffic and an A/B test's visitors
    sources = re.findall(
        r'data-testid="simulated-source"><strong><bdi>([^<]+)</bdi></strong>, ([^<]+)</li>', text
    )
    assert sources == [
        ("A/B test “hybrid”", "2026-11-19 to 2026-11-20: test visitors"),
        ("demo traffic", "2026-11-20 to 2026-11-20: test shoppers"),
    ]
    summary = text[text.index('data-testid="summary"') : text.index('id="analytics-series"')]
    assert re.search(r"Searches</div><div class=\"v\">4<", summary)
    assert (
        "25,0\xa0%" in summary and "50,0\xa0%" in summary and "7,00\xa0€" in summary
    )  # the tenant's de-DE, EUR
    assert 'href="/console/t/rules/new?query=zzz"' in text  # the no-result query, one click from a rule
    no_clicks = text[text.index('data-testid="no-clicks"') :]
    assert "<bdi>hat</bdi>" in no_clicks
    # results nobody clicked are a rule's work too (pin, boost, redirect): one click from the editor
    assert 'href="/console/t/rules/new?query=hat" data-testid="make-rule"' in no_clicks
    assert "<bdi>similar</bdi>" in text and "<bdi>r1</bdi>" in text
    assert '"searches": [4]' in text  # the daily series the charts draw
    assert "(empty)" not in text  # the page load is no query among the others: a card of its own
    browse = re.search(
        r'data-testid="card-empty-queries".*?Empty query \(browse\).*?class="v">(\d+)<', text, re.S
    )
    assert browse and browse.group(1) == "1"
    assert 'href="/console/t/analytics"' in text  # in the navigation


def test_make_a_rule_starts_on_the_exact_query(env: tuple[TestClient, AuthKit]) -> None:
    client, kit = env
    _sign_in(client, kit.token(["t"], [SEARCH_READ, RULES_WRITE, ANALYTICS_READ]))
    editor = client.get("/console/t/rules/new?query=zzz")
    assert editor.status_code == 200
    assert re.search(r'<option value="exact"\s+selected', editor.text), "the query condition is exact"
    assert 'value="zzz"' in editor.text


def test_csv_export(env: tuple[TestClient, AuthKit]) -> None:
    client, kit = env
    _sign_in(client, kit.token(["t"], [SEARCH_READ, ANALYTICS_READ]))
    resp = client.get(f"/console/t/analytics/export/searches/no-results.csv?{PERIOD}")
    assert resp.status_code == 200
    assert resp.headers["content-disposition"] == (
        'attachment; filename="t-searches-no-results-2026-11-20-2026-11-20.csv"'
    )
    assert resp.text.splitlines() == ["query,searches", "zzz,1"]
    assert client.get("/console/t/analytics/export/secrets.csv").status_code == 404


def test_without_the_scope_there_is_no_analytics(env: tuple[TestClient, AuthKit]) -> None:
    client, kit = env
    _sign_in(client, kit.token(["t"], [SEARCH_READ]))
    page = client.get(f"/console/t/analytics?{PERIOD}")
    assert "does not hold the analytics:read scope" in page.text
    assert 'href="/console/t/analytics"' not in client.get("/console/t/rules").text


def test_every_card_says_what_its_figure_is(env: tuple[TestClient, AuthKit]) -> None:
    client, kit = env
    _sign_in(client, kit.token(["t"], [SEARCH_READ, ANALYTICS_READ]))
    text = client.get(f"/console/t/analytics?{PERIOD}").text
    summary = text[text.index('data-testid="summary"') : text.index('id="analytics-series"')]
    cards = re.findall(
        r'<div class="card stat"[^>]*title="([^"]+)"[^>]*>.*?<p class="def">([^<]+)</p>', summary
    )
    assert len(cards) == summary.count('class="card stat"') == 6
    assert all(len(caption) > 20 and caption == tooltip for tooltip, caption in cards)
    assert "Conversion per search" in summary and "Conversion rate" not in text


def test_the_experiment_page_names_conversion_per_visitor(env: tuple[TestClient, AuthKit]) -> None:
    client, kit = env
    token = kit.token(["t"], [SEARCH_READ, RULES_WRITE, ANALYTICS_READ])
    _sign_in(client, token)
    body = {
        "name": "Hybrid off",
        "variants": [{"id": "control"}, {"id": "b", "changes": {"hybrid": {"enabled": False}}}],
    }
    auth = {"Authorization": f"Bearer {token}"}
    made = client.post("/experiments", params={"tenant": "t"}, json=body, headers=auth)
    assert made.status_code == 201, made.text
    path = f"/console/t/experiments/{made.json()['id']}"
    draft = client.get(path).text
    assert "Baseline conversion per visitor (%)" in draft and "conversion per visitor (two-sided" in draft
    started = client.post(f"/experiments/{made.json()['id']}/start", params={"tenant": "t"}, headers=auth)
    assert started.status_code == 200, started.text
    results = client.get(path).text
    header = results[results.index('data-testid="results"') :]
    assert "<th>Conversion per visitor (primary)</th>" in header and "Conversion rate" not in results


def test_an_inverted_period_is_said_so_not_shown_as_one_day(env: tuple[TestClient, AuthKit]) -> None:
    client, kit = env
    _sign_in(client, kit.token(["t"], [SEARCH_READ, ANALYTICS_READ]))
    text = client.get("/console/t/analytics?from=2026-11-21&to=2026-11-20").text
    error = text[text.index('data-testid="error"') :]
    assert error.startswith('data-testid="error">This period cannot be shown: ')
    assert 'data-testid="summary"' not in text  # no figures of a day nobody asked for
    assert 'name="from" value="2026-11-21"' in text and 'name="to" value="2026-11-20"' in text
    export = client.get("/console/t/analytics/export/summary.csv?from=2026-11-21&to=2026-11-20")
    assert export.status_code == 400


def test_today_is_left_out_of_the_daily_charts_unless_asked(env: tuple[TestClient, AuthKit]) -> None:
    client, kit = env
    _sign_in(client, kit.token(["t"], [SEARCH_READ, ANALYTICS_READ]))
    text = client.get("/console/t/analytics?from=2026-11-20&to=2026-11-25").text
    assert '"days": ["2026-11-20"], "searches": [4]' in text  # no cliff: 2026-11-25 has one search so far
    note = text[text.index('data-testid="partial"') :]
    assert note.startswith('data-testid="partial">2026-11-25: not a whole day (1 searches so far)')
    shown = client.get("/console/t/analytics?from=2026-11-20&to=2026-11-25&partial=show").text
    assert '"days": ["2026-11-20", "2026-11-25 (partial)"], "searches": [4, 1]' in shown
    assert 'data-testid="partial"' not in shown


def test_summary_cards_show_the_change_against_the_previous_period(env: tuple[TestClient, AuthKit]) -> None:
    client, kit = env
    _sign_in(client, kit.token(["t"], [SEARCH_READ, ANALYTICS_READ]))
    text = client.get(f"/console/t/analytics?{PERIOD}").text
    assert "against the previous period of the same length, 2026-11-19 to 2026-11-19" in text

    def change(card: str) -> tuple[str, str] | None:
        found = re.search(
            rf'data-testid="card-{card}".*?class="v">[^<]*</div>(?:<div class="delta (\w+)" '
            r'data-testid="change">([^<]+) <)?',
            text,
            re.S,
        )
        assert found, card
        return (found.group(2), found.group(1)) if found.group(1) else None

    assert change("searches") == ("+100,0\xa0%", "good")  # 4 searches, 2 the day before
    assert change("no-result-rate") == ("+25,0 pts", "bad")  # 25 % of searches, none the day before
    assert change("click-through-rate") == ("+0,0 pts", "flat")  # 50 % both days
    assert change("conversion") == ("+25,0 pts", "good")
    assert change("revenue") is None  # nothing earned the day before: no ratio to show
