"""The demo's simulated shoppers: the click model's shape, and a month that attribution can read."""

from __future__ import annotations

from datetime import UTC, date, datetime

from aisle.analytics.records import Answer, Outcome
from aisle.demo.traffic import ClickModel, Shown, Traffic, replay_sessions, simulate_searches

PRODUCTS = tuple(f"p{i}" for i in range(20))


def test_click_model_prefers_top_positions_and_relevant_products() -> None:
    model = ClickModel()
    assert (
        model.click_probability(1, 3.0) > model.click_probability(2, 3.0) > model.click_probability(10, 3.0)
    )
    assert model.click_probability(3, 3.0) > model.click_probability(3, 2.0) > model.click_probability(3, 1.0)
    assert model.click_probability(1, 2.5) == (0.25 + 0.6) / 2  # halfway between relevance 2 and 3
    assert model.conversion_probability(3.0) > model.conversion_probability(1.0)


def test_simulated_month_is_consistent_and_repeatable() -> None:
    searched: list[str] = []

    def search(text: str) -> Shown:
        searched.append(text)
        return Shown(
            PRODUCTS if text != "nothing" else (), 0 if text == "nothing" else 50, text, "strict", ()
        )

    judged = {q: {"p0": 3.0, "p3": 2.0} for q in ("q1", "q2", "q3")}
    traffic = Traffic(last_day=date(2026, 11, 25), days=7, searches_per_day=200)
    run = list(simulate_searches("t", ["q1", "q2", "q3", "nothing"], judged, search, lambda p: 10.0, traffic))
    answers = [r for r in run if isinstance(r, Answer)]
    outcomes = [r for r in run if isinstance(r, Outcome)]
    assert 7 * 150 < len(answers) < 7 * 300
    assert len(set(searched)) == len(searched)  # each query searched once, its answer reused
    tokens = {a.token: a for a in answers}
    clicks = [o for o in outcomes if o.event_type == "click"]
    assert clicks and all(o.attribution_token in tokens for o in clicks)
    assert all(tokens[o.attribution_token].product_ids[o.position - 1] == o.product_id for o in clicks)  # type: ignore[index, operator]
    first = sum(o.position == 1 for o in clicks)
    assert first > sum(o.position == 10 for o in clicks)  # position bias
    purchases = [o for o in outcomes if o.event_type == "purchase"]
    assert purchases and any(o.attribution_token is None for o in purchases)
    assert all(tokens[a].at <= o.at for o in clicks for a in [o.attribution_token] if a)
    days = {datetime.fromtimestamp(a.at, UTC).date() for a in answers}
    assert min(days) >= date(2026, 11, 19) and max(days) <= date(2026, 11, 25)
    again = list(
        simulate_searches("t", ["q1", "q2", "q3", "nothing"], judged, search, lambda p: 10.0, traffic)
    )
    assert [(type(r).__name__, r.at) for r in again] == [(type(r).__name__, r.at) for r in run]


def test_replayed_sessions_click_the_real_next_product() -> None:
    def recommend(seed: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return (("b", "c", "x"), ("m1",)) if seed == "a" else ((), ())

    run = list(replay_sessions("t", "also", [["a", "c", "z"]], recommend, lambda p: 1.0,
                               Traffic(last_day=date(2026, 11, 25), days=2)))  # fmt: skip
    answers = [r for r in run if isinstance(r, Answer)]
    assert [(a.container_id, a.product_ids, a.models) for a in answers] == [
        ("also", ("b", "c", "x"), ("m1",))
    ]
    clicks = [r for r in run if isinstance(r, Outcome)]
    assert [(o.product_id, o.position, o.attribution_token) for o in clicks] == [("c", 2, answers[0].token)]
