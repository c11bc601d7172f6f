"""The analytics reports on a known log, checked exactly (counts, rates, revenue, positions, the
attribution of conversions without a token, the one-hour window, duplicate events)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from aisle.analytics.log import ParquetLog
from aisle.analytics.recorder import Recorder
from aisle.analytics.records import Answer, Outcome
from aisle.analytics.reports import AnalyticsReports
from aisle.core.storage import BlobStore

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC).timestamp()
DAY_START = datetime(2026, 11, 20, tzinfo=UTC).timestamp()
DAY_END = DAY_START + 86400


def _search(token: str, visitor: str, query: str, products: list[str], at: float, rules=()) -> Answer:
    return Answer("t", token, "search", at, tuple(products), len(products), query=query,
                  rules=tuple(rules), visitor_id=visitor)  # fmt: skip


def _event(eid: str, kind: str, visitor: str, product: str, at: float, **kw: object) -> Outcome:
    return Outcome("t", eid, kind, at, visitor, product, **kw)  # type: ignore[arg-type]


LOG = [
    _search("a1", "v1", "shoes", ["p1", "p2", "p3"], T0, rules=["r1"]),
    _search("a2", "v2", "shoes", ["p2", "p4"], T0 + 60),
    _search("a3", "v1", "zzz", [], T0 + 120),
    _search("a4", "v3", "hat", ["p5"], T0 + 180, rules=["r1"]),
    Answer("t", "a5", "recommendations", T0 + 200, ("p6", "p1"), 2, container_id="similar", visitor_id="v1"),
    _event("e1", "click", "v1", "p2", T0 + 10, attribution_token="a1", position=2),
    _event("e1", "click", "v1", "p2", T0 + 11, attribution_token="a1", position=2),  # sent twice
    _event("e2", "click", "v2", "p4", T0 + 70, attribution_token="a2"),  # position from the answer: 2
    # no token: the latest answer to v1 that showed p1 within the hour is the recommendation a5
    _event("e3", "purchase", "v1", "p1", T0 + 1000, price=10.0, quantity=2.0),
    # no token, 3601 s after the only answer to v2 that showed p2: outside the window, credited nowhere
    _event("e4", "purchase", "v2", "p2", T0 + 60 + 3601, price=5.0),
    _event("e5", "purchase", "v2", "p4", T0 + 500, attribution_token="a2", price=7.0),
    _event("e6", "click", "v1", "p6", T0 + 210, attribution_token="a5", position=1),
    _event("e7", "view", "v3", "p5", T0 + 190),  # a view without a token counts for nothing
    _event("e8", "click", "v9", "p1", T0 + 20),  # a click without a token counts for nothing
]


@pytest.fixture(params=["rolled-up", "live"])
def reports(request: pytest.FixtureRequest, any_blob_store: BlobStore, tmp_path: Path) -> AnalyticsReports:
    """The reports over LOG: read from the day's roll-up (the day is closed), or attributed live (the
    clock says it is still that day): both must give the same figures."""
    log = ParquetLog(any_blob_store, tmp_path / "cache")
    recorder = Recorder(log, start=False)
    for record in LOG[:7]:  # two batches, two files per table: the reports read them as one
        recorder.record(record)
    recorder.flush()
    for record in LOG[7:]:
        recorder.record(record)
    recorder.close()
    assert recorder.written == len(LOG) and recorder.dropped == 0
    if request.param == "live":
        return AnalyticsReports(log, clock=lambda: T0 + 3 * 3600)
    return AnalyticsReports(log, clock=lambda: T0 + 5 * 86400)


def test_summary(reports: AnalyticsReports) -> None:
    assert reports.summary("t", DAY_START, DAY_END) == {
        "searches": 4,
        "visitors": 3,
        "noResultSearches": 1,
        "noResultRate": 0.25,
        "clickThroughRate": 0.5,
        "conversionRate": 0.25,
        "revenue": 7.0,
        "averageClickPosition": 2.0,
        "emptyQuerySearches": 0,
    }


def test_per_query_reports(reports: AnalyticsReports) -> None:
    rows = reports.searches("t", DAY_START, DAY_END)
    assert rows == [
        {"query": "shoes", "searches": 2, "noResultSearches": 0, "clicks": 2, "clickThroughRate": 1.0,
         "conversions": 1, "revenue": 7.0},
        {"query": "hat", "searches": 1, "noResultSearches": 0, "clicks": 0, "clickThroughRate": 0.0,
         "conversions": 0, "revenue": 0.0},
        {"query": "zzz", "searches": 1, "noResultSearches": 1, "clicks": 0, "clickThroughRate": 0.0,
         "conversions": 0, "revenue": 0.0},
    ]  # fmt: skip
    by_no_results = reports.searches("t", DAY_START, DAY_END, sort="noResultSearches", limit=1)
    assert [r["query"] for r in by_no_results] == ["zzz"]
    assert reports.no_result_queries("t", DAY_START, DAY_END) == [{"query": "zzz", "searches": 1}]
    assert reports.no_click_queries("t", DAY_START, DAY_END) == [{"query": "hat", "searches": 1}]


def test_positions(reports: AnalyticsReports) -> None:
    assert reports.positions("t", DAY_START, DAY_END, depth=3) == [
        {"position": 1, "clicks": 0, "clickThroughRate": 0.0},
        {"position": 2, "clicks": 2, "clickThroughRate": 1.0},
        {"position": 3, "clicks": 0, "clickThroughRate": 0.0},
    ]


def test_recommendations_and_rules(reports: AnalyticsReports) -> None:
    assert reports.recommendations("t", DAY_START, DAY_END) == [
        {"containerId": "similar", "answers": 1, "clicks": 1, "clickThroughRate": 1.0, "conversions": 1,
         "revenue": 20.0}
    ]  # fmt: skip
    assert reports.rules("t", DAY_START, DAY_END) == [
        {"ruleId": "r1", "searches": 2, "clickThroughRate": 0.5, "conversions": 0}
    ]


def test_daily_and_period_bounds(reports: AnalyticsReports) -> None:
    assert [d["day"] for d in reports.daily("t", DAY_START - 86400, DAY_END + 86400)] == ["2026-11-20"]
    # a period after the answers: nothing, and rates are None rather than a division by zero
    empty = reports.summary("t", DAY_END, DAY_END + 86400)
    assert empty["searches"] == 0 and empty["clickThroughRate"] is None
    # a period starting after a1 and a2: their clicks and a2's conversion no longer count
    later = reports.summary("t", T0 + 100, DAY_END)
    assert (later["searches"], later["clickThroughRate"], later["revenue"]) == (2, 0.0, 0.0)


def test_a_day_cut_short_is_marked_partial(reports: AnalyticsReports) -> None:
    """Today, not over (the live clock: three hours after T0), is partial; the same day read five days
    on is whole; a period starting mid-day cuts its first day."""
    today = reports.rollups.today() == date(2026, 11, 20)
    assert [(d["day"], d["partial"]) for d in reports.daily("t", DAY_START, DAY_END)] == [
        ("2026-11-20", today)
    ]
    assert [d["partial"] for d in reports.daily("t", T0 - 60, DAY_END)] == [True]


def test_unknown_tenant_has_no_figures(reports: AnalyticsReports) -> None:
    assert reports.searches("other", DAY_START, DAY_END) == []


def test_expire_deletes_old_days(any_blob_store: BlobStore, tmp_path: Path) -> None:
    log = ParquetLog(any_blob_store, tmp_path / "cache")
    old = datetime(2026, 10, 1, 12, tzinfo=UTC).timestamp()
    log.write([_search("o1", "v", "q", ["p"], old), _search("n1", "v", "q", ["p"], T0)])
    assert log.days("t", "answers") == [date(2026, 10, 1), date(2026, 11, 20)]
    assert log.expire("t", keep_days=30, today=date(2026, 11, 26)) == [date(2026, 10, 1)]
    assert log.days("t", "answers") == [date(2026, 11, 20)]


def test_a_late_file_makes_the_rollup_stale(any_blob_store: BlobStore, tmp_path: Path) -> None:
    log = ParquetLog(any_blob_store, tmp_path / "cache")
    log.write(LOG)
    reports = AnalyticsReports(log, clock=lambda: T0 + 5 * 86400)
    assert reports.summary("t", DAY_START, DAY_END)["clickThroughRate"] == 0.5
    day = date(2026, 11, 20)
    first = reports.rollups.path("t", day, reports.rollups.fingerprint(*reports.rollups.sources("t", day)))
    assert any_blob_store.exists(first)
    # a click on a4 arrives late (a process's buffer written after an outage): a new file in the day
    log.write([_event("late", "click", "v3", "p5", T0 + 200, attribution_token="a4", position=1)])
    reports.rollups.forget()  # else the listing is reused for LISTING_TTL_S and hides the new file
    assert reports.summary("t", DAY_START, DAY_END)["clickThroughRate"] == 0.75
    assert not any_blob_store.exists(first)  # the stale roll-up is gone, replaced by the new one


def test_models(any_blob_store: BlobStore, tmp_path: Path) -> None:
    log = ParquetLog(any_blob_store, tmp_path / "cache")
    two = Answer(
        "t", "m2", "recommendations", T0, ("p1", "p2"), 2, container_id="c", models=("a", "b"), visitor_id="v"
    )
    log.write([two, _event("mc", "click", "v", "p2", T0 + 5, attribution_token="m2", position=2)])
    for clock in (T0 + 60, T0 + 5 * 86400):  # live, then rolled up
        rows = AnalyticsReports(log, clock=lambda c=clock: c).models("t", DAY_START, DAY_END)
        assert [(r["modelId"], r["answers"], r["clicks"], r["clickThroughRate"]) for r in rows] == [
            ("a", 1, 1, 1.0),
            ("b", 1, 1, 1.0),
        ]


def test_reports_asked_at_once_compute_a_day_once_and_never_replace_it(
    any_blob_store: BlobStore, tmp_path: Path
) -> None:
    """The console asks for eight reports at once: one roll-up is computed, and a file a report is
    reading is never overwritten by another computation (DuckDB read it as 'Invalid data')."""
    from concurrent.futures import ThreadPoolExecutor

    log = ParquetLog(any_blob_store, tmp_path / "cache")
    log.write(LOG)
    writes: list[str] = []
    put_if_absent = any_blob_store.put_if_absent
    put = any_blob_store.put

    def counted_create(path: str, data: bytes) -> bool:
        writes.append(path)
        return put_if_absent(path, data)

    def refused_put(path: str, data: bytes) -> None:
        assert "/rollups/" not in path, f"a roll-up was overwritten: {path}"
        put(path, data)

    reports = AnalyticsReports(log, clock=lambda: T0 + 5 * 86400)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(any_blob_store, "put_if_absent", counted_create)
        mp.setattr(any_blob_store, "put", refused_put)
        with ThreadPoolExecutor(8) as pool:
            rates = list(pool.map(lambda _: reports.summary("t", DAY_START, DAY_END), range(8)))
    assert [r["clickThroughRate"] for r in rates] == [0.5] * 8
    assert len([w for w in writes if "rollups" in w]) == 1
