"""A container's saved recommendation rules inside the predict engine: every caller gets them, first."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from tests.support.recs import CooccurrenceRecommender, register_and_deploy, write_tenant

from aisle.core.errors import BadRequest
from aisle.core.events import open_event_store_url
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.recs.actions import PredictAction
from aisle.recs.containers import ContainerBody, ContainerStore
from aisle.recs.models.base import ModelType
from aisle.recs.serving import ContainerCache, PredictEngine, PredictParams, PredictQuery, RegistryModelSource

T = "shop"
PRODUCTS = pl.DataFrame(
    {
        "id": [f"p{i}" for i in range(6)],
        "title": [f"Product {i}" for i in range(6)],
        "price": [float(10 * (i + 1)) for i in range(6)],
    }
)
SESSIONS = [["p0", "p1"]] * 4 + [["p0", "p2"]] * 3 + [["p0", "p3"]] * 2 + [["p0", "p4"]]
CHEAP = PredictAction.model_validate(
    {"type": "FILTER", "condition": {"op": "lt", "field": "price", "value": 35}}
)
BURY_P1 = PredictAction.model_validate(
    {"type": "BURY", "weight": 5, "condition": {"op": "eq", "field": "id", "value": "p1"}}
)


class Clock:
    """Monotonic seconds that move only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def body(rules: list[PredictAction]) -> ContainerBody:
    slot = {"slotConfigId": "main", "modelId": "m1", "itemCount": 4}
    return ContainerBody(slotConfigurations=[slot], recommendationRules=rules)  # type: ignore[list-item]


@pytest.fixture
def writer(blob_store: BlobStore) -> ContainerStore:
    write_tenant(blob_store, T, PRODUCTS)
    register_and_deploy(blob_store, T, "m1", ModelType.CUSTOMERS_ALSO_VIEW)
    containers = ContainerStore(Tenants(blob_store).scope(T))
    containers.create("c1", body([CHEAP]))
    return containers


def engine_over(store: BlobStore, tmp_path: Path, clock: Clock) -> PredictEngine:
    model = CooccurrenceRecommender(SESSIONS)
    return PredictEngine(
        Tenants(store),
        open_event_store_url(f"sqlite://{tmp_path / 'events.sqlite3'}"),
        RegistryModelSource(lambda scope, record: model),
        containers=ContainerCache(2.0, clock=clock),
    )


def ids(engine: PredictEngine, **fields: object) -> list[str]:
    return [i.id for i in engine.predict(T, PredictQuery(container_id="c1", seeds=["p0"], **fields))]  # type: ignore[arg-type]


def test_saved_rules_apply_to_a_direct_predict_and_only_the_flag_leaves_them_out(
    blob_store: BlobStore, writer: ContainerStore, tmp_path: Path
) -> None:
    engine = engine_over(blob_store, tmp_path, Clock())
    assert ids(engine) == ["p1", "p2"]  # price < 35: p3 (40) and p4 (50) are filtered out
    assert ids(engine, params=PredictParams(container_rules=False)) == ["p1", "p2", "p3", "p4"]


def test_request_actions_come_after_the_saved_rules_and_both_apply(
    blob_store: BlobStore, writer: ContainerStore, tmp_path: Path
) -> None:
    engine = engine_over(blob_store, tmp_path, Clock())
    items = engine.predict(
        T, PredictQuery(container_id="c1", seeds=["p0"], actions=[BURY_P1], params=PredictParams(debug=True))
    )
    assert [i.id for i in items] == ["p2", "p1"]  # still filtered by the saved rule, p1 buried
    buried = next(i for i in items if i.id == "p1")
    assert buried.explanation is not None
    assert buried.explanation["rules"] == [{"index": 1, "type": "BURY", "weight": 5.0}]  # saved rule is 0


def test_saved_rules_and_actions_over_fifty_are_refused(
    blob_store: BlobStore, writer: ContainerStore, tmp_path: Path
) -> None:
    engine = engine_over(blob_store, tmp_path, Clock())
    assert len(ids(engine, actions=[BURY_P1] * 49)) == 2  # 1 saved + 49: exactly the bound
    with pytest.raises(BadRequest) as err:
        ids(engine, actions=[BURY_P1] * 50)
    assert err.value.code == "value_invalid" and err.value.status == 400
    # without the saved rules, 50 actions are within the bound
    assert len(ids(engine, actions=[BURY_P1] * 50, params=PredictParams(container_rules=False))) == 4


def test_a_rule_edit_is_served_once_the_container_cache_bound_has_passed(
    blob_store: BlobStore, writer: ContainerStore, tmp_path: Path
) -> None:
    clock = Clock()
    engine = engine_over(blob_store, tmp_path, clock)
    assert ids(engine) == ["p1", "p2"]
    writer.replace("c1", body([]), version=1)  # the merchandiser drops the rule
    clock.now += 1.5
    assert ids(engine) == ["p1", "p2"]  # within the documented 2 s: the cached container still rules
    clock.now += 0.5
    assert ids(engine) == ["p1", "p2", "p3", "p4"]
