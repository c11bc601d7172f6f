"""Recs' part of experiments: a variant's container change applied to a container, and promoted into the
tenant's containers through the experiments front door."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from tests.support.recs import write_tenant

from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.experiments.admin import ExperimentAdmin, ExperimentInvalid
from aisle.experiments.model import ContainerChange, ExperimentBody
from aisle.recs.containers import Container, ContainerBody, ContainerStore
from aisle.recs.serving.experiments import ContainerPromotion, apply_change
from aisle.search.experiment_promotion import SearchPromotion
from aisle.search.ranking.store import RankerStore

PRODUCTS = pl.DataFrame({"id": ["p0", "p1"], "title": ["Red shoe", "Blue bag"]})


def test_a_variant_switches_the_containers_saved_rules_off() -> None:
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


def test_promoting_a_recommendations_variant_saves_its_container(tmp_path: Path) -> None:
    store = open_blob_store(f"file://{tmp_path / 'bucket'}")
    write_tenant(store, "shop", PRODUCTS)
    tenants = Tenants(store, ttl=0)
    slot = {"slotConfigId": "main", "modelId": "m1", "itemCount": 4}
    ContainerStore(tenants.scope("shop")).create(
        "c1", ContainerBody.model_validate({"slotConfigurations": [slot]})
    )
    admin = ExperimentAdmin(
        tenants, [ContainerPromotion(tenants.scope), SearchPromotion(tenants, RankerStore(store))]
    )
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
        admin.create("shop", ExperimentBody.model_validate(with_search_change))
    draft = admin.create("shop", ExperimentBody.model_validate(body))
    admin.start("shop", draft.id)
    promoted = admin.promote("shop", draft.id, "b")
    assert promoted.status == "promoted" and promoted.promotedVariant == "b"
    container = ContainerStore(tenants.scope("shop")).get("c1")
    assert [s.modelId for s in container.slotConfigurations] == ["m2"] and container.version == 2
