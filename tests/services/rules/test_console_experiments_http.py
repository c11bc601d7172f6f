"""An experiment's page as a merchandiser reads it (no browser): the plan on the primary metric against
the sample so far, the sample-ratio check with its p-value, effects absolute and relative, Promote
preselecting the winner (and asking when there is none), changes in words and the history in time
order. Results come from a stand-in source answering the analysis of chosen per-visitor totals, so each
page shows a known situation (the demo's: control wins on click-through with 30,000 visitors a side)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from html import unescape
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from tests.services.rules.test_console_http import sign_in

from aisle.experiments import statistics as st
from aisle.experiments.analysis import analyse
from aisle.experiments.model import Experiment
from aisle.services.rules.console.experiment_words import change_words, history_lines, variant_line

T = {"tenant": "fashion"}


class Fixed:
    """A results source answering the analysis of fixed per-visitor totals."""

    def __init__(self, totals: dict[str, st.VisitorTotals]) -> None:
        self.totals = totals

    def experiment_results(self, tenant: str, experiment: Experiment) -> dict[str, Any]:
        body = analyse(experiment, self.totals)
        return {**body, "experimentId": experiment.id, "status": experiment.status, "simulated": False}


def arm(rng: np.random.Generator, n: int, conversion: float, ctr: float) -> st.VisitorTotals:
    searches = 1 + rng.poisson(1.5, n)
    clicked = rng.binomial(searches, ctr)
    converted = rng.binomial(1, conversion, n)
    return st.VisitorTotals(searches, clicked, converted, converted * rng.lognormal(3.0, 0.8, n))


def started(client: TestClient, metric: str, mde: float = 0.05, changes: dict[str, Any] | None = None) -> str:
    body = {
        "name": "Ranker or none",
        "primaryMetric": metric,
        "minimumDetectableEffect": mde,
        "variants": [{"id": "control"}, {"id": "b", "changes": changes or {"hybrid": {"enabled": False}}}],
    }
    made = client.post("/experiments", params=T, json=body)
    assert made.status_code == 201, made.text
    exp_id = str(made.json()["id"])
    assert client.post(f"/experiments/{exp_id}/start", params=T).status_code == 200
    return exp_id


def shown(client: TestClient, exp_id: str, totals: dict[str, st.VisitorTotals]) -> str:
    client.app.state.rules.experiments.source = Fixed(totals)  # type: ignore[attr-defined]
    got = client.get(f"/console/fashion/experiments/{exp_id}")
    assert got.status_code == 200, got.text
    return got.text


def part(html: str, testid: str) -> str:
    """The text of the element marked ``data-testid=testid`` (tags dropped, spaces folded)."""
    m = re.search(rf'<(\w+)[^>]*data-testid="{testid}"[^>]*>(.*?)</\1>', html, re.S)
    assert m, f"no {testid} on the page"
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", m.group(2))).split())


def selected(html: str) -> list[str]:
    form = re.search(r'<select name="variant"[^>]*>(.*?)</select>', html, re.S)
    assert form
    return re.findall(r'<option value="([^"]*)"[^>]*\bselected\b', form.group(1))


@pytest.fixture
def signed_in(client: TestClient) -> TestClient:
    client.cookies.clear()
    sign_in(client)
    return client


def test_the_list_names_each_variant_with_its_share_of_visitors(signed_in: TestClient) -> None:
    body = {
        "name": "Three ways",
        "variants": [
            {"id": "control", "weight": 2},
            {"id": "b", "name": "No hybrid", "changes": {"hybrid": {"enabled": False}}},
            {"id": "c", "name": "Hybrid <on>", "changes": {"hybrid": {"enabled": True}}},
        ],
    }
    assert signed_in.post("/experiments", params=T, json=body).status_code == 201
    listed = part(signed_in.get("/console/fashion/experiments").text, "experiments")
    assert "control · 50% No hybrid · 25% Hybrid <on> · 25%" in listed  # a name escaped, not markup


def test_the_demo_case_plans_on_click_through_and_promotes_the_winning_control(signed_in: TestClient) -> None:
    """Control wins on click-through with 30,000 visitors a side: the page said "Winner: control" and
    "needs 39,651 visitors per variant" (a conversion plan) at once, and Promote preselected control
    only because it came first."""
    rng = np.random.default_rng(44)
    exp_id = started(signed_in, "clickThroughRate")
    html = shown(
        signed_in, exp_id, {"control": arm(rng, 30_025, 0.139, 0.43), "b": arm(rng, 29_975, 0.135, 0.414)}
    )
    winner = part(html, "winner")
    assert "Winner: control (the live setting)" in winner and "click-through rate" in winner
    plan = part(html, "plan")
    assert "click-through rate" in plan and "Complete" in plan and "Not complete" not in plan
    needed = int(re.search(r"needs ([\d,]+) visitors per variant", plan).group(1).replace(",", ""))  # type: ignore[union-attr]
    assert needed < 30_000 and needed != st.sample_size(0.139, 0.05)
    srm = part(html, "srm")
    assert "as planned" in srm and "p = " in srm and "50%" in srm and "50.0" not in srm
    b_row = part(html, "results").split(" b ")[-1]
    assert re.search(r"-\d\.\d\d pts \[-\d\.\d\d pts, -\d\.\d\d pts\] · -\d\.\d% relative", b_row), b_row
    assert selected(html) == ["control"]


def test_a_leader_before_the_plan_is_not_called_the_winner(signed_in: TestClient) -> None:
    rng = np.random.default_rng(45)
    exp_id = started(signed_in, "conversionRate")
    html = shown(signed_in, exp_id, {"control": arm(rng, 400, 0.10, 0.4), "b": arm(rng, 400, 0.40, 0.4)})
    winner = part(html, "winner")
    assert "b is ahead, not yet the winner" in winner and "Winner:" not in winner
    plan = part(html, "plan")
    assert "Not complete: <1% of the plan" in plan and "conversion per visitor" in plan
    assert re.search(r"control 6\.25%, so ±0\.31 pts\)", plan), plan  # a relative MDE in points too
    assert selected(html) == ["b"]  # the API's winner, preselected


def test_without_a_winner_promote_asks_for_an_explicit_choice(signed_in: TestClient) -> None:
    exp_id = started(signed_in, "conversionRate")
    html = shown(signed_in, exp_id, {})
    assert "No winner yet" in part(html, "winner")
    assert selected(html) == [""]  # the placeholder, not control
    assert re.search(r'<option value="" selected disabled>', html)
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', html).group(1)  # type: ignore[union-attr]
    refused = signed_in.post(
        f"/console/fashion/experiments/{exp_id}/promote", data={"csrf": csrf, "variant": ""}
    )
    assert "Choose the variant to promote" in refused.text
    assert signed_in.get(f"/experiments/{exp_id}", params=T).json()["status"] == "running"


def test_a_broken_split_shows_its_p_value_and_no_decision(signed_in: TestClient) -> None:
    rng = np.random.default_rng(46)
    exp_id = started(signed_in, "conversionRate")
    html = shown(signed_in, exp_id, {"control": arm(rng, 5_200, 0.1, 0.4), "b": arm(rng, 4_800, 0.1, 0.4)})
    assert "No decision: the split is broken" in part(html, "winner")
    srm = part(html, "srm")
    assert "Sample ratio mismatch" in srm and "p = 6.3e-05" in srm and "52%" in srm and "48%" in srm


def test_changes_in_words_and_history_in_time_order(signed_in: TestClient) -> None:
    changes = {"hybrid": {"enabled": False}, "settings": {"stages": {"min_hits": 5}}}
    exp_id = started(signed_in, "conversionRate", changes=changes)
    store = signed_in.app.state.rules.experiments.store("fashion")  # type: ignore[attr-defined]
    store.transition(exp_id, "stopped", "stopped", ("running",), at=datetime.now(UTC) - timedelta(days=400))
    html = shown(signed_in, exp_id, {})
    variants = part(html, "variants")
    assert "the live setting for 50% of visitors" in variants
    assert "hybrid off, setting stages.min_hits = 5 for 50% of visitors" in variants
    assert "{" not in variants
    history = part(html, "history")
    assert history.index("Stopped") < history.index("Created") < history.index("Started")


def test_each_change_has_words() -> None:
    assert change_words({"ranker": 3}) == ["ranker v3"]
    assert change_words({"ranker": "none", "rulesOff": ["a", "b"], "rulesOn": ["c"]}) == [
        "rules a, b off",
        "rule c on",
        "no learned ranker",
    ]
    assert change_words({"hybrid": {"enabled": True, "blendWeight": 0.3}}) == [
        "hybrid on",
        "hybrid blend weight 0.3",
    ]
    containers = {"pdp": {"slots": {"0": "m2"}, "rulesOff": ["*"]}}
    assert change_words({"containers": containers}) == [
        "container pdp: slot 1 serves model m2",
        "container pdp: its rules off",
    ]
    assert variant_line({"changes": {"ranker": 3}, "weight": 1}, 0.5) == "ranker v3 for 50% of visitors"
    assert variant_line({"changes": {}}, 1 / 3) == "the live setting for 33.3% of visitors"
    exp = {
        "variants": [
            {"id": "control", "changes": {}},
            {"id": "b", "changes": {"hybrid": {"enabled": False}}},
        ],
        "history": [
            {"action": "created", "at": "2026-11-26T10:00:00Z"},
            {"action": "started", "at": "2026-11-12T00:00:00Z"},
            {"action": "promoted", "at": "2026-11-27T08:30:00Z", "variant": "b"},
        ],
    }
    lines = history_lines(exp)
    assert [line["action"] for line in lines] == ["started", "created", "promoted"]
    assert lines[-1] == {
        "at": "2026-11-27 08:30 UTC",
        "text": "Promoted b: hybrid off is the live setting now",
        "action": "promoted",
    }
