"""Behaviour features computed from a tiny hand-made log, checked against counts worked out by hand."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pytest

from aisle.analytics.log import ParquetLog
from aisle.analytics.records import Answer, Outcome
from aisle.behaviour.store import BehaviourStore, refresh
from aisle.behaviour.tables import PRIOR_WEIGHT
from aisle.core.storage import open_blob_store

NOW = 1_790_000_000.0
DAY = 86400.0


def _answer(token: str, at: float, query: str, shown: tuple[str, ...], total: int = 50) -> Answer:
    return Answer("t", token, "search", at, shown, total, query=query, visitor_id="v")


def _event(eid: str, kind: str, at: float, product: str, token: str | None) -> Outcome:
    return Outcome("t", eid, kind, at, "v", product, attribution_token=token)


@pytest.fixture
def log(tmp_path: Path) -> ParquetLog:
    parquet = ParquetLog(open_blob_store(f"file://{tmp_path / 'bucket'}"), tmp_path / "cache", writer="w")
    recent, old = NOW - 2 * DAY, NOW - 40 * DAY
    parquet.write(
        [
            _answer("a1", recent, "drill", ("p1", "p2", "p3")),
            _answer("a2", recent + 10, "drill", ("p1", "p2", "p3")),
            _answer("a3", old, "drill", ("p2", "p1")),  # 40 days ago: only in the 90-day window
            _answer("a4", recent, "saw", (), total=0),  # no result
            _answer("x", recent, "", ("p9",)),  # kind search with no query: not in the click table
            _event("e1", "click", recent + 5, "p2", "a1"),
            _event("e1", "click", recent + 5, "p2", "a1"),  # written twice: counted once
            _event("e2", "add_to_cart", recent + 20, "p2", "a1"),
            _event("e3", "purchase", recent + 60, "p2", "a1"),
            _event("e4", "click", old + 5, "p2", "a3"),
            _event("e5", "click", recent + 15, "p3", None),  # no token: credits no answer
            _event("e6", "click", recent + 15, "p8", "a2"),  # a product the answer did not show
        ]
    )
    return parquet


def test_counts_and_smoothed_rates_by_window(log: ParquetLog) -> None:
    record = refresh(log, "t", now=NOW)
    store = BehaviourStore(log.store)
    assert store.current("t") == record and record.version == 1
    assert (record.searches, record.clicks, record.queries) == (5, 2, 3)
    qp = store.table("t", "query_product").to_pylist()
    row = {(r["query"], r["product_id"], r["window_days"]): r for r in qp}
    p2_7 = row[("drill", "p2", 7)]
    assert (p2_7["impressions"], p2_7["clicks"], p2_7["carts"], p2_7["purchases"]) == (2, 1, 1, 1)
    p2_90 = row[("drill", "p2", 90)]
    assert (p2_90["impressions"], p2_90["clicks"]) == (3, 2)
    # the 7-day window: 6 drill impressions with 1 click (the no-query answer counts too: 7 impressions)
    ctr0 = 1 / 7
    assert p2_7["ctr"] == pytest.approx((1 + PRIOR_WEIGHT * ctr0) / (2 + PRIOR_WEIGHT))
    assert row[("drill", "p1", 7)]["ctr"] == pytest.approx(PRIOR_WEIGHT * ctr0 / (2 + PRIOR_WEIGHT))
    # one ranking per query: no position bias can be told, examinations are impressions
    assert record.propensities is None
    assert p2_7["examinations"] == pytest.approx(2.0)
    queries = {(r["query"], r["window_days"]): r for r in store.table("t", "query").to_pylist()}
    assert queries[("saw", 7)]["no_result_rate"] == 1.0
    assert queries[("drill", 7)]["no_click_rate"] == pytest.approx(0.5)
    assert queries[("drill", 90)]["searches"] == 3
    products = store.table("t", "product")
    p2 = products.filter(
        pc.and_(pc.equal(products["product_id"], "p2"), pc.equal(products["window_days"], 30))
    )
    assert p2["clicks"].to_pylist() == [1]
    clicks = store.table("t", "clicks").to_pylist()
    assert {
        (r["query"], r["product_id"], r["position"]): (r["impressions"], r["clicks"]) for r in clicks
    } == {
        ("drill", "p1", 1): (2, 0),
        ("drill", "p2", 2): (2, 1),
        ("drill", "p3", 3): (2, 0),
        ("drill", "p2", 1): (1, 1),
        ("drill", "p1", 2): (1, 0),
    }


def test_a_new_refresh_is_a_new_version_and_pointer_moves_last(log: ParquetLog) -> None:
    first = refresh(log, "t", now=NOW)
    second = refresh(log, "t", now=NOW + DAY)
    store = BehaviourStore(log.store)
    assert second.version == first.version + 1
    assert store.current("t") == second
    assert store.table("t", "query", version=first.version).num_rows > 0


def test_empty_log_publishes_empty_tables(tmp_path: Path) -> None:
    parquet = ParquetLog(open_blob_store(f"file://{tmp_path / 'b'}"), tmp_path / "c")
    record = refresh(parquet, "t", now=NOW)
    assert (record.searches, record.clicks, record.rows["query_product"]) == (0, 0, 0)


def test_an_experiments_arms_are_the_interventions_position_bias_is_estimated_from(tmp_path: Path) -> None:
    """30 queries, each answered by an experiment's two arms in opposite orders (25 answers per arm):
    every pair is shown at two positions by two arms, and the click table keeps the arms apart."""
    parquet = ParquetLog(open_blob_store(f"file://{tmp_path / 'b'}"), tmp_path / "c", writer="w")
    records: list[Answer | Outcome] = []
    for q in range(30):
        for arm, shown in (("e1:control", (f"a{q}", f"b{q}")), ("e1:explore", (f"b{q}", f"a{q}"))):
            for s in range(25):
                token = f"{q}-{arm}-{s}"
                at = NOW - DAY + q * 100 + s
                records.append(
                    Answer("t", token, "search", at, shown, 2, query=f"q{q}", variant=arm, visitor_id="v")
                )
                if s % 2 == 0:  # the first position clicked every other answer, the second every fifth
                    records.append(_event(f"{token}-1", "click", at + 1, shown[0], token))
                if s % 5 == 0:
                    records.append(_event(f"{token}-2", "click", at + 1, shown[1], token))
    parquet.write(records)
    record = refresh(parquet, "t", now=NOW)
    assert record.propensities is not None and record.propensities[0] == 1.0
    assert (record.propensity_pairs, record.propensity_across_arms) == (60, 60)
    assert record.propensities[1] == pytest.approx(5 / 13, abs=0.01)  # 5 clicks of 25 against 13 of 25
    clicks = BehaviourStore(parquet.store).table("t", "clicks")
    assert clicks.num_rows == 120 and set(clicks["variant"].to_pylist()) == {"e1:control", "e1:explore"}
    row = {(r["product_id"], r["variant"]): r for r in clicks.to_pylist() if r["query"] == "q0"}
    assert (row[("a0", "e1:control")]["position"], row[("a0", "e1:explore")]["position"]) == (1, 2)
    assert (row[("a0", "e1:control")]["impressions"], row[("a0", "e1:control")]["clicks"]) == (25, 13)
