"""Which searches the search service may run on its event loop (issue 18): only CPU work, never a wait."""

from __future__ import annotations

import threading
from pathlib import Path

from tests.support.external import crs_config, write_outdoor_tenant

from aisle.core.storage import BlobStore, open_blob_store
from aisle.core.tenancy import Tenants
from aisle.search.engine import SearchEngine
from aisle.search.indexes import IndexRegistry
from aisle.search.query import SearchQuery
from aisle.vectors.search import VectorSearch
from aisle.vectors.store import VectorStore


def _engine(store: BlobStore, data_dir: Path) -> SearchEngine:
    tenants = Tenants(store, ttl=60)
    return SearchEngine(tenants, IndexRegistry(tenants, data_dir), VectorSearch(VectorStore(data_dir)))


def test_a_warm_tenant_on_a_local_store_runs_inline_a_cold_one_does_not(tmp_path: Path) -> None:
    engine = _engine(open_blob_store(f"file://{tmp_path / 'bucket'}"), tmp_path / "data")
    write_outdoor_tenant(engine.tenants.store, "outdoor")
    assert engine.readiness("outdoor").waits  # its index is not open yet: it may build
    engine.search("outdoor", SearchQuery("tent"))
    assert not engine.readiness("outdoor").waits


def test_a_catalog_check_falling_due_is_made_inline_and_only_a_new_version_waits(tmp_path: Path) -> None:
    """Issue 32: the check of an unchanged catalog is one pointer read on the event loop, not a trip to
    the thread pool for every request arriving until a thread-pool request takes it."""
    engine = _engine(open_blob_store(f"file://{tmp_path / 'bucket'}"), tmp_path / "data")
    write_outdoor_tenant(engine.tenants.store, "outdoor")
    opened = engine.indexes.get("outdoor")
    engine.indexes.check_every = 0.0  # every request is due a check
    assert not engine.readiness("outdoor").waits  # the pointer read inline: the same version
    assert not engine.readiness("outdoor").waits
    write_outdoor_tenant(engine.tenants.store, "outdoor")  # a new catalog version
    assert engine.readiness("outdoor").waits  # opening it is the thread pool's work
    assert engine.indexes.get("outdoor") is not opened
    assert not engine.readiness("outdoor").waits


def test_an_unknown_tenant_goes_to_the_thread_pool_to_raise_there(tmp_path: Path) -> None:
    engine = _engine(open_blob_store(f"file://{tmp_path / 'bucket'}"), tmp_path / "data")
    assert engine.readiness("nobody").waits


def test_a_tenant_with_an_external_fallback_runs_inline_its_call_awaited(tmp_path: Path) -> None:
    # issue 32: the fallback's HTTP call is awaited by search_async, so it no longer decides the path
    engine = _engine(open_blob_store(f"file://{tmp_path / 'bucket'}"), tmp_path / "data")
    write_outdoor_tenant(engine.tenants.store, "outdoor", crs_config("http://127.0.0.1:9"))
    engine.indexes.get("outdoor")
    assert engine.tenants.config("outdoor").crs.active
    assert not engine.readiness("outdoor").waits


def test_a_remote_store_never_runs_inline(tmp_path: Path, s3_blob_store: BlobStore) -> None:
    store = s3_blob_store
    engine = _engine(store, tmp_path / "data")
    write_outdoor_tenant(store, "outdoor")
    engine.search("outdoor", SearchQuery("tent"))
    assert engine.indexes.is_current("outdoor", engine.tenants.config("outdoor").attributes)
    assert engine.readiness("outdoor").waits  # a cache refresh would be a network call


def test_while_one_request_checks_the_catalog_the_others_answer_from_the_open_index(tmp_path: Path) -> None:
    engine = _engine(open_blob_store(f"file://{tmp_path / 'bucket'}"), tmp_path / "data")
    write_outdoor_tenant(engine.tenants.store, "outdoor")
    opened = engine.indexes.get("outdoor")
    engine.indexes.check_every = 0.0  # every request would look at storage
    answered = threading.Event()
    served: list[object] = []

    def search_meanwhile() -> None:
        served.append(engine.indexes.get("outdoor"))
        answered.set()

    with engine.indexes.checking("outdoor"):  # another request is checking storage (or building) right now
        assert not engine.readiness("outdoor").waits
        other = threading.Thread(target=search_meanwhile, daemon=True)
        other.start()
        # answered while the check is still held: a request queued behind it could not answer before
        # the block ends (the wait is only a guard against hanging the suite)
        assert answered.wait(timeout=60), "the request waited behind the check"
    other.join()
    assert served == [opened]
    assert not engine.indexes.is_current("outdoor", engine.tenants.config("outdoor").attributes)  # checks
    assert engine.indexes.get("outdoor") is opened  # same catalog version: the same index


def test_a_changed_configuration_waits_for_the_check(tmp_path: Path) -> None:
    engine = _engine(open_blob_store(f"file://{tmp_path / 'bucket'}"), tmp_path / "data")
    write_outdoor_tenant(engine.tenants.store, "outdoor")
    engine.indexes.get("outdoor")
    other = engine.tenants.config("outdoor").attributes.model_copy(deep=True)  # a new configuration object
    with engine.indexes.checking("outdoor"):
        assert not engine.indexes.is_current("outdoor", other)
