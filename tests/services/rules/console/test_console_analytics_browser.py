"""The Analytics section in real Chromium: figures, charts drawn, the simulated label, a no-result query
turned into a rule in one click, CSV export, and the console at 400 px wide."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from tests.services.rules.console.conftest import ConsoleEnv, shot, sign_in

from aisle.analytics.engine import AnalyticsEngine, SimulatedPeriod
from aisle.analytics.records import Answer, Outcome
from aisle.core.storage import open_blob_store

DAY = date(2026, 11, 20)
T0 = datetime(2026, 11, 20, 10, tzinfo=UTC).timestamp()


def _log(env: ConsoleEnv) -> None:
    store = open_blob_store(env.settings.storage_url)
    engine = AnalyticsEngine.from_settings(env.settings, store)
    shoes = Answer("fashion", "b1", "search", T0, ("15970", "1163"), 2, query="shoes", visitor_id="v1")
    socks = Answer("fashion", "b2", "search", T0 + 60, (), 0, query="purple socks xl", visitor_id="v2")
    recs = Answer(
        "fashion", "b3", "recommendations", T0 + 90, ("1163",), 1, container_id="pdp", models=("also-viewed",)
    )
    click = Outcome("fashion", "e1", "click", T0 + 5, "v1", "1163", attribution_token="b1", position=2)
    buy = Outcome("fashion", "e2", "purchase", T0 + 99, "v1", "1163", attribution_token="b1", price=999.0)
    for record in (shoes, socks, recs, click, buy):
        engine.record(record)
    engine.close()
    engine.mark_simulated("fashion", SimulatedPeriod(DAY, DAY, "browser-test shoppers"))


def test_the_analytics_pages(console_env: ConsoleEnv, page: Any) -> None:
    env = console_env
    _log(env)
    sign_in(page, env, env.full_token)
    page.click("nav >> text=Analytics")
    page.goto(f"{env.console}/console/fashion/analytics?from={DAY}&to={DAY}")
    page.wait_for_selector("body[data-charts=drawn]")
    figures = page.locator("[data-testid=summary] .v").all_inner_texts()
    # searches, no-result rate, CTR, conversion per search, revenue, empty queries
    assert figures == ["2", "50.0%", "50.0%", "50.0%", "₹999.00", "0"]  # the tenant's currency, INR
    assert "browser-test shoppers" in page.inner_text("[data-testid=simulated]")
    assert page.locator("canvas").count() == 4
    assert "purple socks xl" in page.inner_text("[data-testid=no-results]")
    assert "pdp" in page.inner_text("[data-testid=containers]")
    shot(page, "10-analytics")
    with page.expect_download() as download:
        page.click("text=Export CSV")
        page.click("a:has-text('searches/no-results')")
    lines = download.value.path().read_text().splitlines()
    assert lines == ["query,searches", "purple socks xl,1"]
    page.click("[data-testid=make-rule]")
    page.wait_for_url("**/rules/new?query=*")
    assert page.input_value("input[name=q_value]") == "purple socks xl"
    assert page.input_value("select[name=q_match]") == "exact"
    page.goto(f"{env.console}/console/fashion/models")
    live = page.inner_text("[data-testid=metrics-also-viewed]")
    assert "last 28 days (simulated): 1 answers, 0 clicks" in live


def test_the_console_fits_a_400px_screen(console_env: ConsoleEnv, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 400, "height": 800})
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        sign_in(page, console_env, console_env.full_token)
        for path in ("rules", "rules/new", "containers", f"analytics?from={DAY}&to={DAY}"):
            page.goto(f"{console_env.console}/console/fashion/{path}")
            sideways = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert sideways <= 0, f"{path} scrolls {sideways} px sideways at 400 px"
            nav = page.locator("header.top nav")
            assert nav.is_visible() and nav.bounding_box()["x"] >= 0
            assert page.locator("nav >> text=Containers").is_visible()
        shot(page, "11-narrow-analytics")
    finally:
        context.close()
