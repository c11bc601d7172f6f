"""The edit engine without HTTP: one object for models and jobs, containers and events of every tenant
(event ingestion is the behaviour engine's: ``tests/behaviour/test_engine.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from tests.support.recs import CooccurrenceRecommender, register_and_deploy, write_tenant

from aisle.core.config import Settings
from aisle.core.errors import AisleError
from aisle.core.storage import open_blob_store
from aisle.recs.containers import ContainerBody
from aisle.recs.editing import RecsEditor
from aisle.recs.jobs import JobStatus
from aisle.recs.models.base import ModelType

PRODUCTS = pl.DataFrame({"id": ["p0", "p1", "p2"], "title": ["Zero", "One", "Two"]})


@pytest.fixture
def editor(tmp_path: Path) -> Iterator[RecsEditor]:
    # no AISLE_REDIS_URL: the embedded event store in data_dir
    settings = Settings(auth="off", storage_url=f"file://{tmp_path / 'bucket'}", data_dir=tmp_path / "data")
    store = open_blob_store(settings.storage_url)
    write_tenant(store, "shop", PRODUCTS, event_types=["view"])
    register_and_deploy(store, "shop", "m1", ModelType.CUSTOMERS_ALSO_VIEW)
    register_and_deploy(store, "shop", "idle", ModelType.CUSTOMERS_ALSO_VIEW, deploy=False)
    editor = RecsEditor.from_settings(settings, store, loader=lambda s, r: CooccurrenceRecommender([]))
    yield editor
    editor.close()


def slots(model_id: str) -> ContainerBody:
    return ContainerBody.model_validate(
        {"slotConfigurations": [{"slotConfigId": "main", "modelId": model_id}]}
    )


def code(exc: pytest.ExceptionInfo[AisleError]) -> tuple[int, str]:
    return exc.value.status, str(exc.value.code)


def test_models_containers_and_their_refusals(editor: RecsEditor) -> None:
    states = {m.record.model_id: m.deployment is not None for m in editor.models("shop")}
    assert states == {"idle": False, "m1": True}
    created = editor.create_container("shop", "c1", slots("m1"))
    assert created.version == 1 and [c.containerId for c in editor.containers("shop")] == ["c1"]
    with pytest.raises(AisleError) as undeployed:
        editor.create_container("shop", "c2", slots("idle"))
    assert code(undeployed) == (409, "model_not_deployed")
    with pytest.raises(AisleError) as in_use:
        editor.undeploy("shop", "m1")
    assert code(in_use) == (409, "model_in_use")
    assert editor.replace_container("shop", "c1", slots("m1"), version=1).version == 2
    editor.delete_container("shop", "c1", version=2)
    undeploy = editor.undeploy("shop", "m1")
    assert editor.jobs.run_pending() == 1  # this replica's runner, run inline instead of its thread
    assert editor.job("shop", undeploy.jobId).status is JobStatus.completed
    with pytest.raises(AisleError) as unknown:
        editor.containers("nope")
    assert code(unknown) == (404, "tenant_not_found")
