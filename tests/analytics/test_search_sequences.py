"""A query typed letter by letter is one search (Algolia's analytics count it so), and an empty query
(a page load, a browse) is a line of its own: in every search report, from roll-ups and live."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from aisle.analytics.log import ParquetLog
from aisle.analytics.records import Answer, Outcome
from aisle.analytics.reports import AnalyticsReports
from aisle.analytics.search_sequences import TYPING_PAUSE_S
from aisle.core.storage import open_blob_store

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC).timestamp()
DAY_START = datetime(2026, 11, 20, tzinfo=UTC).timestamp()
DAY_END = DAY_START + 86400


def _search(token: str, query: str, at: float, total: int = 3, visitor: str | None = "v1") -> Answer:
    products = ("p1", "p2", "p3")[: min(total, 3)]
    return Answer("t", token, "search", at, products, total, query=query, visitor_id=visitor)


TYPED = [  # "nike" typed in four seconds; "nik" found nothing for a moment
    _search("k1", "n", T0),
    _search("k2", "ni", T0 + 1.2),
    _search("k3", "nik", T0 + 2.5, total=0),
    _search("k4", "nike", T0 + 4.0),
    # a click and a purchase on what "nike" showed
    Outcome("t", "c1", "click", T0 + 9, "v1", "p2", attribution_token="k4", position=2),
    Outcome("t", "b1", "purchase", T0 + 60, "v1", "p2", attribution_token="k4", price=30.0),
    # the same visitor, after a pause, searches "n" alone: a search of its own, nobody clicks it
    _search("k5", "n", T0 + 4.0 + TYPING_PAUSE_S + 20),
    # another visitor's "ni" at the same moment as v1's keystrokes is not part of v1's typing
    _search("o1", "ni", T0 + 1.5, visitor="v2"),
    # answers without a visitor cannot be told apart: each counts
    _search("x1", "sh", T0 + 100, visitor=None),
    _search("x2", "shoe", T0 + 101, visitor=None),
    # the home page (an empty query), and the visitor types right after: the page load stays a browse
    _search("e1", "", T0 + 200, visitor="v3"),
    _search("e2", "hat", T0 + 201, visitor="v3"),
]


@pytest.fixture(params=["rolled-up", "live"])
def reports(request: pytest.FixtureRequest, tmp_path: Path) -> AnalyticsReports:
    log = ParquetLog(open_blob_store(f"file://{tmp_path}/bucket"), tmp_path / "cache")
    log.write(TYPED)
    now = T0 + 5 * 86400 if request.param == "rolled-up" else T0 + 3600
    return AnalyticsReports(log, clock=lambda: now)


def test_a_typed_query_is_one_search_of_the_last_query(reports: AnalyticsReports) -> None:
    rows = {r["query"]: r for r in reports.searches("t", DAY_START, DAY_END)}
    assert sorted(rows) == ["hat", "n", "ni", "nike", "sh", "shoe"]
    assert (rows["nike"]["searches"], rows["nike"]["clicks"], rows["nike"]["conversions"]) == (1, 1, 1)
    assert rows["n"]["searches"] == 1  # the later "n", not the first keystroke
    assert rows["ni"]["searches"] == 1  # v2's
    summary = reports.summary("t", DAY_START, DAY_END)
    assert summary["searches"] == 6  # nike, n, v2's ni, sh, shoe, hat
    assert summary["noResultSearches"] == 0  # "nik" found nothing, but the search was of "nike"
    assert summary["clickThroughRate"] == pytest.approx(1 / 6)
    assert summary["conversionRate"] == pytest.approx(1 / 6)
    assert summary["averageClickPosition"] == 2.0
    assert reports.no_result_queries("t", DAY_START, DAY_END) == []
    no_clicks = {r["query"]: r["searches"] for r in reports.no_click_queries("t", DAY_START, DAY_END)}
    assert no_clicks == {"n": 1, "ni": 1, "sh": 1, "shoe": 1, "hat": 1}
    assert [(d["day"], d["searches"]) for d in reports.daily("t", DAY_START, DAY_END)] == [("2026-11-20", 6)]


def test_a_pause_longer_than_typing_starts_a_new_search(tmp_path: Path) -> None:
    log = ParquetLog(open_blob_store(f"file://{tmp_path}/bucket"), tmp_path / "cache")
    log.write([_search("s1", "ni", T0), _search("s2", "nike", T0 + TYPING_PAUSE_S + 0.5)])
    rows = AnalyticsReports(log, clock=lambda: T0 + 3600).searches("t", DAY_START, DAY_END)
    assert sorted((r["query"], r["searches"]) for r in rows) == [("ni", 1), ("nike", 1)]


def test_an_empty_query_is_counted_apart(reports: AnalyticsReports) -> None:
    summary = reports.summary("t", DAY_START, DAY_END)
    assert summary["emptyQuerySearches"] == 1
    rows = reports.searches("t", DAY_START, DAY_END)
    assert rows and all(r["query"] for r in rows)
    assert "" not in {r["query"] for r in reports.no_click_queries("t", DAY_START, DAY_END)}


def test_an_experiment_counts_a_typed_query_as_one_search(tmp_path: Path) -> None:
    """The experiment page's searches per variant are the reports' searches: v1's four keystrokes of
    "nike" are one search, with its click and purchase; recommendations stay one answer each."""
    from dataclasses import replace

    log = ParquetLog(open_blob_store(f"file://{tmp_path}/bucket"), tmp_path / "cache")
    tagged = [replace(r, variant="exp1:b") if isinstance(r, Answer) else r for r in TYPED]
    log.write(tagged)
    reports = AnalyticsReports(log, clock=lambda: T0 + 3600)
    rows = {
        (v, visitor): rest
        for v, visitor, *rest in reports.experiment_visitors("t", DAY_START, DAY_END, "exp1")
    }
    assert rows[("b", "v1")] == [2, 1, 1, 30.0]  # "nike" (clicked, bought) and the later "n"
    assert rows[("b", "v2")] == [1, 0, 0, 0.0]
    assert rows[("b", "v3")] == [2, 0, 0, 0.0]  # the page load and "hat"
    assert all(visitor is not None for _, visitor in rows)  # no visitor: not in an experiment
