"""The popularity artifact: counts, windows, weights, smoothing and trending on a hand-made event table,
and its publication (tables, record, pointer last; a failed write leaves the previous version current)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from aisle.core.storage import BlobStore, open_blob_store
from aisle.recs import popularity_store
from aisle.recs.popularity import DAY_S, PopularityParams, compute_popularity

NOW = 100 * DAY_S


def events(rows: list[tuple[str, str, float]]) -> pl.DataFrame:
    """``(item, event type, days before NOW)`` rows as canonical events."""
    return pl.DataFrame(
        {
            "item_id": [r[0] for r in rows],
            "event_type": [r[1] for r in rows],
            "ts": [NOW - r[2] * DAY_S for r in rows],
            "session_id": ["s"] * len(rows),
        }
    )


EVENTS = events(
    [
        ("a", "view", 0.0),  # the newest event: "now"
        ("a", "purchase", 0.5),
        ("b", "view", 20.0),
        ("b", "click", 1.0),  # a click counts as a view
        ("b", "view", 50.0),
        ("c", "add_to_cart", 2.0),
        ("d", "search", 0.1),  # a type without weight: no product row
        ("e", "view", 95.0),  # outside the longest window
    ]
)


def test_counts_per_window_and_smoothed_shares() -> None:
    tables = compute_popularity(EVENTS)
    assert tables.now == NOW and tables.events == 7  # e is out of the 90 days
    w = {(r["item_id"], r["window_days"]): r for r in tables.windows.iter_rows(named=True)}
    assert sorted({i for i, _ in w}) == ["a", "b", "c"]
    assert (w["a", 7.0]["views"], w["a", 7.0]["purchases"], w["a", 7.0]["weighted"]) == (1, 1, 6.0)
    assert (w["b", 7.0]["views"], w["b", 30.0]["views"], w["b", 90.0]["views"]) == (1, 2, 3)
    assert (w["c", 90.0]["carts"], w["c", 90.0]["weighted"]) == (1, 3.0)
    # add-one smoothing over the 3 products: (weighted + 1) / (total + 3)
    assert w["a", 90.0]["share"] == pytest.approx(7 / 15)
    assert w["b", 7.0]["share"] == pytest.approx(2 / 13)
    assert sum(r["share"] for (_, d), r in w.items() if d == 30.0) == pytest.approx(1.0)


def test_popularity_order_and_trending_with_prior() -> None:
    items = compute_popularity(EVENTS).items
    assert items["item_id"].to_list() == ["a", "c", "b"]  # 30-day weighted 6, 3, 2
    trending = dict(zip(items["item_id"], items["trending"], strict=True))
    # p_long = (w90 + 1) / (12 + 3); short share shrunk with 10 pseudo-events: (w7 + 10 p) / (10 + 10)
    for item, w7, w90 in (("a", 6.0, 6.0), ("b", 1.0, 3.0), ("c", 3.0, 3.0)):
        p = (w90 + 1) / 15
        assert trending[item] == pytest.approx(((w7 + 10 * p) / 20) / p)
    assert trending["a"] > 1 > trending["b"]  # a bought this week is rising, b mostly seen long ago


def test_prior_pulls_a_few_recent_events_towards_one() -> None:
    rows = [("old", "view", 60.0)] * 50 + [("new", "view", 0.0)] * 2 + [("old", "view", 1.0)]
    weak = compute_popularity(events(rows), params=PopularityParams(prior=0.0)).items
    strong = compute_popularity(events(rows), params=PopularityParams(prior=1000.0)).items
    t = {
        n: dict(zip(f["item_id"], f["trending"], strict=True))
        for n, f in (("weak", weak), ("strong", strong))
    }
    assert t["weak"]["new"] > 5 and 1 < t["strong"]["new"] < 1.1


def test_given_now_ignores_later_events_and_weights_are_configurable() -> None:
    tables = compute_popularity(EVENTS, now=NOW - 10 * DAY_S, params=PopularityParams(weights={"view": 1.0}))
    # a, c (and the click on b) are after "now"; e's view (95 days before NOW) is 85 days before it
    assert tables.items["item_id"].to_list() == ["b", "e"]
    assert tables.items["weighted"].to_list() == [1.0, 0.0]  # 30 days before now: b's view at 20 days


def test_empty_events_and_bad_params() -> None:
    assert compute_popularity(EVENTS.clear()).items.height == 0
    with pytest.raises(ValueError, match="popularity_days"):
        compute_popularity(EVENTS, params=PopularityParams(popularity_days=14.0))
    with pytest.raises(ValueError, match="columns"):
        compute_popularity(EVENTS.drop("ts"))


class FailingStore:
    """A store that records every write and fails the first write whose path ends with ``fail``."""

    def __init__(self, inner: BlobStore, fail: str | None = None) -> None:
        self.inner, self.fail = inner, fail
        self.writes: list[str] = []

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def _record(self, path: str) -> None:
        if self.fail and path.endswith(self.fail):
            self.fail = None
            raise OSError(f"disk full writing {path}")
        self.writes.append(path)

    def put(self, path: str, data: bytes) -> None:
        self._record(path)
        self.inner.put(path, data)

    def put_if_absent(self, path: str, data: bytes) -> bool:
        self._record(path)
        return self.inner.put_if_absent(path, data)


def test_publish_writes_the_pointer_last_and_reads_back(tmp_path: Path) -> None:
    store = FailingStore(open_blob_store(f"file://{tmp_path}"))
    assert popularity_store.current_version(store) is None
    params = PopularityParams()
    record = popularity_store.refresh(store, EVENTS, info={"source": "test"})  # type: ignore[arg-type]
    assert record.version == 1 and record.items == 3 and record.info == {"source": "test"}
    assert store.writes[-1] == popularity_store.POINTER
    assert store.writes[:-1] == [
        f"models/popularity/v1/{n}" for n in ("items.parquet", "windows.parquet", "meta.json")
    ]
    assert popularity_store.current_version(store) == 1
    assert popularity_store.read_table(store, 1)["item_id"].to_list() == ["a", "c", "b"]  # type: ignore[arg-type]
    assert popularity_store.read_record(store, 1).trending_days == list(params.trending_days)  # type: ignore[arg-type]


def test_a_failed_publish_leaves_the_previous_version_current(tmp_path: Path) -> None:
    inner = open_blob_store(f"file://{tmp_path}")
    popularity_store.refresh(inner, EVENTS)
    failing = FailingStore(inner, fail="meta.json")
    with pytest.raises(OSError, match="disk full"):
        popularity_store.refresh(failing, EVENTS.head(1))  # type: ignore[arg-type]
    assert popularity_store.current_version(inner) == 1
    assert popularity_store.read_table(inner, 1).height == 3
    again = popularity_store.refresh(inner, EVENTS.head(1))  # the half-written v2 is skipped, not reused
    assert again.version == 3 and popularity_store.current_version(inner) == 3


def test_rees46_counts_every_event_once_and_shares_sum_to_one(shared_data: Path) -> None:
    from aisle.recs.events import rees46_events

    events = rees46_events(shared_data)
    params = PopularityParams(windows=(1 / 48, 1.0), popularity_days=1.0, trending_days=(1 / 48, 1.0))
    tables = compute_popularity(events, params=params)
    day = tables.windows.filter(pl.col("window_days") == 1.0)
    kinds = events["event_type"].value_counts()
    count = dict(zip(kinds["event_type"], kinds["count"], strict=True))
    assert (day["views"].sum(), day["carts"].sum(), day["purchases"].sum()) == (
        count["view"],
        count["add_to_cart"],
        count["purchase"],
    )
    for _, window in tables.windows.group_by("window_days"):
        assert window["share"].sum() == pytest.approx(1.0)
    items = tables.items
    assert items["popularity"].is_sorted(descending=True) and items.height == events["item_id"].n_unique()
    rising = items.sort("trending", descending=True)["item_id"][0]
    last_half_hour = tables.windows.filter(pl.col("window_days") == 1 / 48, pl.col("item_id") == rising)
    assert last_half_hour["weighted"][0] > 0  # the most trending product had events in the short window


def test_backfill_with_an_empty_artifact_is_the_catalog_order_one() -> None:
    from aisle.recs.serving.backfill import backfill
    from aisle.recs.serving.popularity import ServedPopularity
    from aisle.recs.serving.products import ProductTable

    table = ProductTable.from_frame("v1", pl.DataFrame({"id": ["a", "b", "c"], "category": ["x", "x", "x"]}))
    empty = ServedPopularity.of(1, [], [], [])
    busy = ServedPopularity.of(2, ["c", "b"], [0.6, 0.4], [1.0, 2.0])

    def run(pop: ServedPopularity | None, order: str = "popular") -> list[tuple[str, str]]:
        return backfill(table, ["a"], lambda i: i != "a", set(), 5, wide=False, popularity=pop, order=order)  # type: ignore[arg-type]

    assert run(None) == run(empty) == [("b", "category"), ("c", "category")]
    assert run(busy) == [("c", "category:popular"), ("b", "category:popular")]
    assert run(busy, "trending") == [("b", "category:trending"), ("c", "category:trending")]
