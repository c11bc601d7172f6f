"""A/B experiments on recommendations: the visitor's variant of a container (another model in a slot,
the saved rules off) served by POST /predict, named in the answer and in the logged answer."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient
from tests.services.predict.conftest import SESSIONS
from tests.support.recs import CooccurrenceRecommender, register_and_deploy

from aisle.analytics.log import ParquetLog
from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.experiments.assignment import assign
from aisle.experiments.model import ExperimentBody
from aisle.experiments.store import ExperimentStore
from aisle.recs.models.base import ModelType
from aisle.recs.serving import RegistryModelSource
from aisle.services.predict.app import create_app

OTHER = [["p0", "p9"]] * 5 + [["p0", "p10"]] * 4 + [["p0", "p11"]] * 3


def test_each_visitor_gets_their_variants_container(settings: Settings, shop: str, tmp_path: Path) -> None:
    store = open_blob_store(settings.storage_url)
    register_and_deploy(store, shop, "m2", ModelType.CUSTOMERS_ALSO_VIEW)
    experiments = ExperimentStore(Tenants(store).scope(shop))
    body = ExperimentBody.model_validate(
        {
            "name": "Other model",
            "surface": "recommendations",
            "variants": [
                {"id": "control"},
                {"id": "b", "changes": {"containers": {"c1": {"slots": {"0": "m2"}}}}},
            ],
        }
    )
    draft = experiments.create(body)
    running = experiments.transition(draft.id, "started", "running", ("draft",))
    models = {"m1": CooccurrenceRecommender(SESSIONS), "m2": CooccurrenceRecommender(OTHER)}
    app = create_app(settings, models=RegistryModelSource(lambda scope, record: models[record.model_id]))
    served: dict[str, tuple[str, list[str], str]] = {}
    with TestClient(app) as client:
        for n in range(40):
            visitor = f"v{n}"
            body_ = {"containerId": "c1", "productIds": ["p0"], "visitorId": visitor}
            got = client.post("/predict", params={"tenant": shop}, json=body_).json()
            variant = assign(running, visitor).id
            assert got["experiments"] == [{"experimentId": draft.id, "variantId": variant}]
            items = [i["id"] for i in got["response_data"]]
            assert items[:3] == (["p9", "p10", "p11"] if variant == "b" else ["p1", "p2", "p3"])
            served[got["attributionToken"]] = (variant, items, visitor)
        anonymous = client.post(
            "/predict", params={"tenant": shop}, json={"containerId": "c1", "productIds": ["p0"]}
        )
        assert "experiments" not in anonymous.json()  # no visitor: the control, untagged
        assert anonymous.json()["response_data"][0]["id"] == "p1"
    assert {v for v, _, _ in served.values()} == {"control", "b"}
    log = ParquetLog(store, tmp_path / "cache")
    days = log.days(shop, "answers")
    rows = {
        r["token"]: r
        for f in log.files(shop, "answers", days[0], days[-1])
        for r in pq.read_table(f).to_pylist()
    }
    for token, (variant, items, _visitor) in served.items():
        row = rows[token]
        assert row["variant"] == f"{draft.id}:{variant}"
        assert row["models"] == (["m2"] if variant == "b" else ["m1"])
        assert row["product_ids"] == items


def test_a_variant_switches_the_containers_saved_rules_off() -> None:
    from datetime import UTC, datetime

    from aisle.experiments.model import ContainerChange
    from aisle.recs.containers import Container
    from aisle.recs.serving.experiments import apply_change

    now = datetime.now(UTC)
    rules = [
        {"type": "FILTER", "condition": {"op": "lt", "field": "price", "value": 35}},
        {"type": "BURY", "weight": 5, "condition": {"op": "eq", "field": "id", "value": "p1"}},
    ]
    slots = [
        {"slotConfigId": "a", "modelId": "m1", "itemCount": 4},
        {"slotConfigId": "b", "modelId": "m1", "itemCount": 2},
    ]
    container = Container.model_validate(
        {
            "containerId": "c1",
            "version": 1,
            "createdAt": now,
            "updatedAt": now,
            "slotConfigurations": slots,
            "recommendationRules": rules,
        }
    )
    second_off = apply_change(container, ContainerChange(rulesOff=["0"], slots={"1": "m2", "7": "m3"}))
    assert [r.type for r in second_off.recommendationRules] == ["BURY"]
    assert [s.modelId for s in second_off.slotConfigurations] == ["m1", "m2"]  # slot 7 does not exist
    assert apply_change(container, ContainerChange(rulesOff=["*"])).recommendationRules == []
    assert container.recommendationRules and len(container.recommendationRules) == 2  # unchanged


def test_promoting_a_recommendations_variant_saves_its_container(settings: Settings, shop: str) -> None:
    from aisle.recs.containers import ContainerStore
    from aisle.recs.serving.experiments import ContainerPromotion
    from aisle.search.experiment_admin import ExperimentAdmin, ExperimentInvalid
    from aisle.search.ranking.store import RankerStore

    store = open_blob_store(settings.storage_url)
    tenants = Tenants(store, ttl=0)
    admin = ExperimentAdmin(tenants, RankerStore(store), ContainerPromotion(tenants.scope))
    body = {
        "name": "m2",
        "surface": "recommendations",
        "variants": [
            {"id": "control"},
            {"id": "b", "changes": {"containers": {"c1": {"slots": {"0": "m2"}}}}},
        ],
    }
    with_search_change = {**body, "variants": [{"id": "control"}, {"id": "b", "changes": {"ranker": "none"}}]}
    with pytest.raises(ExperimentInvalid):
        admin.create(shop, ExperimentBody.model_validate(with_search_change))
    draft = admin.create(shop, ExperimentBody.model_validate(body))
    admin.start(shop, draft.id)
    promoted = admin.promote(shop, draft.id, "b")
    assert promoted.status == "promoted" and promoted.promotedVariant == "b"
    container = ContainerStore(tenants.scope(shop)).get("c1")
    assert [s.modelId for s in container.slotConfigurations] == ["m2"] and container.version == 2
