"""The behaviour engine's front door without HTTP: events checked then stored (beside the recs editor
that reads them back), the outbox drained into the log, the job kinds it hands the edit service."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path

import polars as pl
import pytest
from tests.support.recs import CooccurrenceRecommender, write_tenant

from aisle.analytics.log import day_of
from aisle.behaviour.engine import BehaviourEngine
from aisle.core.config import Settings
from aisle.core.errors import AisleError
from aisle.core.events import Event, EventName, open_event_store
from aisle.core.storage import open_blob_store
from aisle.recs.editing import RecsEditor

PRODUCTS = pl.DataFrame({"id": ["p0", "p1", "p2"], "title": ["Zero", "One", "Two"]})


@pytest.fixture
def engines(tmp_path: Path) -> Iterator[tuple[BehaviourEngine, RecsEditor]]:
    # no AISLE_REDIS_URL: the embedded event store in data_dir
    settings = Settings(auth="off", storage_url=f"file://{tmp_path / 'bucket'}", data_dir=tmp_path / "data")
    store = open_blob_store(settings.storage_url)
    write_tenant(store, "shop", PRODUCTS, event_types=["view"])
    events = open_event_store(settings)
    behaviour = BehaviourEngine(settings, store, events)
    editor = RecsEditor.from_settings(
        settings, store, events=events, loader=lambda s, r: CooccurrenceRecommender([])
    )
    yield behaviour, editor
    editor.close()


def code(exc: pytest.ExceptionInfo[AisleError]) -> tuple[int, str]:
    return exc.value.status, str(exc.value.code)


def test_events_are_checked_then_stored(engines: tuple[BehaviourEngine, RecsEditor]) -> None:
    behaviour, editor = engines
    assert behaviour.event_types("shop") == ["view", "click"]  # click: every tenant's, for attribution
    with pytest.raises(AisleError) as unknown_type:
        behaviour.record_events("shop", [Event("v1", "purchase", "p1", 1_700_000_000.0)])
    assert code(unknown_type) == (400, "event_type_unknown")
    assert behaviour.record_events("shop", [Event("v1", "view", "p1", 1_700_000_000.0)]) == 1
    stored = editor.recent_events("shop", "v1", 10)
    assert [e.product_id for e in stored] == ["p1"] and stored[0].event_id  # given an id
    with pytest.raises(AisleError) as no_token:
        behaviour.record_events("shop", [Event("v1", "click", "p1", 1_700_000_000.0, position=2)])
    assert code(no_token) == (400, "value_invalid")
    with pytest.raises(AisleError) as unknown_tenant:
        behaviour.record_events("nope", [Event("v1", "view", "p1", 1_700_000_000.0)])
    assert code(unknown_tenant) == (404, "tenant_not_found")


def test_the_drain_moves_accepted_events_into_the_log(engines: tuple[BehaviourEngine, RecsEditor]) -> None:
    behaviour, _ = engines
    sent = [Event(f"v{i}", EventName.CLICK, "p1", 1_700_000_000.0 + i, event_id=f"e{i}") for i in range(3)]
    assert behaviour.record_events("shop", sent) == 3
    assert behaviour.drain() == 3
    assert behaviour.drain() == 0  # moved once
    files = behaviour.analytics.log.files("shop", "outcomes", *_days(sent))
    logged = pl.read_parquet(files)
    assert sorted(logged["event_id"].to_list()) == ["e0", "e1", "e2"]
    assert set(logged["event_type"].to_list()) == {"click"}


def test_it_hands_the_edit_service_its_job_kinds(engines: tuple[BehaviourEngine, RecsEditor]) -> None:
    behaviour, _ = engines
    assert set(behaviour.job_handlers()) == {BehaviourEngine.TRAIN_RANKER, BehaviourEngine.REFRESH_POPULARITY}
    assert (BehaviourEngine.TRAIN_RANKER, BehaviourEngine.REFRESH_POPULARITY) == (
        "train_ranker",
        "refresh_popularity",
    )


def _days(events: list[Event]) -> tuple[date, date]:
    return day_of(min(e.timestamp for e in events)), day_of(max(e.timestamp for e in events))
