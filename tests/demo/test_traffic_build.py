"""The demo's simulated month, built for real on the Home Depot demo tenant and read by the reports."""

from __future__ import annotations

import shutil
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from aisle.analytics.engine import AnalyticsEngine
from aisle.analytics.rollups import day_start
from aisle.core.analytics_layout import partition
from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.demo.traffic import Traffic
from aisle.demo.traffic_build import WRITER, build_demo_traffic, stand_in_price


def test_stand_in_prices_are_fixed_per_product_and_plausible() -> None:
    prices = [stand_in_price(str(i)) for i in range(2000)]
    assert stand_in_price("100001") == stand_in_price("100001")
    assert all(p > 0 for p in prices) and 20 < sorted(prices)[1000] < 45  # median about 30


def test_a_simulated_month_of_searches(demo_env: Any, shared_data: Path, tmp_path: Path) -> None:
    bucket = tmp_path / "bucket"
    shutil.copytree(demo_env.store.local_path("homedepot"), bucket / "homedepot")
    settings = Settings(storage_url=f"file://{bucket}", data_dir=demo_env.data_dir, auth="off")
    store = open_blob_store(settings.storage_url)
    tenants = Tenants(store, ttl=0)
    last = date(2026, 11, 25)
    # a file left by an interrupted run: removed before writing, so nothing counts twice
    stale = f"{partition('homedepot', 'answers', last)}/{WRITER}-00000001.parquet"
    store.put(stale, b"half a run")
    steps: list[str] = []
    traffic = Traffic(last_day=last, days=3, searches_per_day=80)
    said = build_demo_traffic(settings, tenants, "homedepot", shared_data, lambda s, d, t: steps.append(s),
                              traffic=traffic)  # fmt: skip
    assert "simulated records" in said and not store.exists(stale)
    engine = AnalyticsEngine.from_settings(settings, store, record=False)
    period = engine.simulated("homedepot")
    assert period is not None and (period.first, period.last) == (last - timedelta(days=2), last)
    assert "simulated shoppers" in period.note
    summary = engine.reports.summary("homedepot", day_start(period.first), day_start(last) + 86400)
    assert 3 * 50 < summary["searches"] < 3 * 130 and summary["visitors"] > 10
    assert 0 < summary["clickThroughRate"] < 1 and summary["revenue"] > 0  # Aisle's real answers were clicked
    assert summary["noResultRate"] is not None and summary["averageClickPosition"] >= 1
    top = engine.reports.searches("homedepot", day_start(period.first), day_start(last) + 86400, limit=3)
    assert top[0]["searches"] > top[-1]["searches"] or top[0]["searches"] > 1  # Zipf: a head of repeats
    assert (
        build_demo_traffic(settings, tenants, "homedepot", shared_data, lambda *a: None)
        == "already simulated"
    )
