"""The Experiments section in real Chromium: a test created from the form and started with a button,
searches served their variant by the search service, then the results page (variants, intervals, the
winner, the chart) once the log holds the visitors' answers and purchases, and a promotion."""

from __future__ import annotations

import time
from typing import Any

import httpx
from tests.services.rules.console.conftest import ConsoleEnv, shot, sign_in

from aisle.analytics.engine import AnalyticsEngine
from aisle.analytics.records import Answer, Outcome
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.experiments.assignment import assign, tag
from aisle.experiments.model import Experiment


def _traffic(env: ConsoleEnv, experiment: Experiment, visitors: int = 400) -> None:
    """Answers tagged with each visitor's variant and their purchases: ``b`` converts at 40%, the
    control at 10% (a large effect, so the page must name ``b`` the winner)."""
    engine = AnalyticsEngine.from_settings(env.settings, open_blob_store(env.settings.storage_url))
    assert experiment.startedAt is not None
    start = experiment.startedAt.timestamp()  # answers count from the start on
    assert time.time() > start + 0.05
    for n in range(visitors):
        visitor = f"browser-{n}"
        variant = assign(experiment, visitor).id
        token = f"x{n}"
        engine.record(
            Answer(
                "fashion",
                token,
                "search",
                start + 0.01,
                ("15970", "1163"),
                2,
                query="shoes",
                variant=tag(experiment.id, variant),
                visitor_id=visitor,
            )
        )
        if n % 2 == 0:
            engine.record(
                Outcome("fashion", f"c{n}", "click", start + 0.02, visitor, "1163", attribution_token=token)
            )
        if n % 10 < (4 if variant == "b" else 1):
            engine.record(
                Outcome(
                    "fashion",
                    f"p{n}",
                    "purchase",
                    start + 0.03,
                    visitor,
                    "1163",
                    attribution_token=token,
                    price=30.0 + n % 5,
                )
            )
    engine.close()


def test_an_experiment_in_the_console(console_env: ConsoleEnv, page: Any) -> None:
    env = console_env
    sign_in(page, env, env.full_token)
    page.click("nav >> text=Experiments")
    page.wait_for_url("**/console/fashion/experiments")
    page.fill("input[name=name]", "Hybrid off")
    page.fill("input[name=v1_name]", "Lexical only")
    page.select_option("select[name=v1_hybrid]", "off")
    page.click("button:has-text('Create draft')")
    page.wait_for_url("**/console/fashion/experiments/*")
    assert page.inner_text("[data-testid=status]") == "draft"
    plan = page.inner_text("[data-testid=sample-size]")
    assert "122,107 visitors per variant" in plan  # +5% of a 5% conversion rate, two variants
    page.fill("input[name=baseline]", "10")
    page.click("button:has-text('Estimate')")
    page.wait_for_selector("text=57,756")  # +5% of 10%
    page.click("[data-testid=start]")
    page.wait_for_selector("[data-testid=stop]")
    assert page.inner_text("[data-testid=status]") == "running"
    exp_id = page.url.split("/experiments/")[1].split("?")[0]
    auth = {"Authorization": f"Bearer {env.full_token}"}
    experiment = Experiment.model_validate(
        httpx.get(f"{env.console}/experiments/{exp_id}", params={"tenant": "fashion"}, headers=auth).json()
    )
    for visitor in ("browser-1", "browser-2", "browser-3"):
        got = httpx.post(
            f"{env.search}/search",
            headers=auth,
            json={"tenant": "fashion", "query": "shoes", "visitorId": visitor},
        ).json()
        assert got["queryGraph"]["experiments"] == [
            {"experimentId": exp_id, "variantId": assign(experiment, visitor).id}
        ]
    _traffic(env, experiment)
    page.reload()
    page.wait_for_selector("body[data-charts=drawn]")
    rows = page.locator("[data-testid=results] tbody tr")
    assert rows.count() == 2
    # 400 visitors of the 57,756 a side a +5% needs: b leads, the page does not call it the winner yet
    assert "b is ahead, not yet the winner" in page.inner_text("[data-testid=winner]")
    assert "Not complete" in page.inner_text("[data-testid=plan]")
    control_row = page.inner_text("[data-testid=results] tr[data-variant=control]")
    b_row = page.inner_text("[data-testid=results] tr[data-variant=b]")
    assert "control" in control_row and "[" in control_row  # figures with their intervals
    assert "ahead" in b_row and "p=" in b_row and "pts" in b_row and "relative" in b_row
    assert "The split is as planned" in page.inner_text("[data-testid=srm]")
    assert page.locator("canvas#chart-intervals").count() == 1
    variants = page.inner_text("[data-testid=variants]")
    assert "hybrid off for 50% of visitors" in variants and "the live setting for 50%" in variants
    shot(page, "12-experiment")
    assert page.input_value("select[name=variant]") == "b"  # the leader preselected
    page.click("[data-testid=promote]")
    page.wait_for_selector("text=Done: promote")
    assert page.inner_text("[data-testid=status]") == "promoted"
    assert "Promoted b: hybrid off is the live setting now" in page.inner_text("[data-testid=history]")
    live = Tenants(open_blob_store(env.settings.storage_url), ttl=0).config("fashion")
    assert live.global_.hybrid.enabled is False  # b's change is the live setting now
    page.goto(f"{env.console}/console/fashion/experiments")
    assert "Hybrid off" in page.inner_text("[data-testid=experiments]")


def test_the_experiments_pages_fit_a_400px_screen(console_env: ConsoleEnv, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 400, "height": 800})
    page = context.new_page()
    page.set_default_timeout(15_000)
    auth = {"Authorization": f"Bearer {console_env.full_token}"}
    body = {
        "name": "Narrow",
        "variants": [{"id": "control"}, {"id": "b", "changes": {"hybrid": {"enabled": False}}}],
    }
    made = httpx.post(
        f"{console_env.console}/experiments", params={"tenant": "fashion"}, json=body, headers=auth
    )
    assert made.status_code == 201, made.text
    try:
        sign_in(page, console_env, console_env.full_token)
        for path in ("experiments", f"experiments/{made.json()['id']}"):
            page.goto(f"{console_env.console}/console/fashion/{path}")
            sideways = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert sideways <= 0, f"{path} scrolls {sideways} px sideways at 400 px"
        shot(page, "13-narrow-experiment")
    finally:
        context.close()
