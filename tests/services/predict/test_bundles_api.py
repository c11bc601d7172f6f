"""GET /bundles and POST /bundles/recommendations over the app, with a small bundle model."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest
from fastapi.testclient import TestClient
from tests.support.recs import register_and_deploy

from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.recs.containers import ContainerBody, ContainerStore
from aisle.recs.models.base import ModelType, RecContext, Scored
from aisle.recs.serving import RegistryModelSource
from aisle.services.predict.app import create_app

T = {"tenant": "shop"}


@dataclass
class Category:
    category: str
    products: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Plan:
    name: str
    description: str
    categories: list[Category]


class BundleModel:
    """Plans 'shoes + bags' for any seed; fills each category with its products by price rank."""

    model_type = ModelType.BUNDLE_RECOMMENDATIONS
    by_category: ClassVar[dict[str, list[str]]] = {
        "shoes": ["p0", "p1", "p2", "p3"],
        "bags": ["p4", "p5", "p6", "p7"],
    }

    def recommend(self, ctx: RecContext) -> list[Scored]:
        return [Scored(p, 1.0) for p in self.by_category["bags"] if p not in ctx.seeds][: ctx.k]

    def plans(self, product_id: str) -> list[Plan]:
        return [Plan("Complete the look", "Shoes and a bag", [Category("shoes"), Category("bags")])]

    def fill(
        self,
        plans: list[Plan],
        strategy: str,
        per_category: int,
        allowed: Any = None,
        seed: str | None = None,
    ) -> list[Plan]:
        out = []
        for plan in plans:
            cats = []
            for c in plan.categories:
                ids = [p for p in self.by_category[c.category] if allowed is None or allowed(p)]
                cats.append(
                    Category(c.category, [{"id": p, "score": 1.0 - i / 10} for i, p in enumerate(ids)])
                )
            out.append(Plan(plan.name, plan.description, cats))
        return out


@pytest.fixture
def client(settings: Settings, shop: str) -> Iterator[TestClient]:
    store = open_blob_store(settings.storage_url)
    register_and_deploy(store, "shop", "bundler", ModelType.BUNDLE_RECOMMENDATIONS)
    slot = {"slotConfigId": "main", "modelId": "bundler", "itemCount": 3}
    ContainerStore(Tenants(store).scope("shop")).create(
        "bundles", ContainerBody.model_validate({"slotConfigurations": [slot]})
    )
    model = BundleModel()
    app = create_app(settings, models=RegistryModelSource(lambda scope, record: model), warm_interval_s=0)
    with TestClient(app) as c:
        yield c


def test_bundle_plans_have_no_products(client: TestClient) -> None:
    r = client.get("/bundles", params={**T, "productId": "p0"})
    assert r.status_code == 200
    assert r.json() == {
        "success": True,
        "error": None,
        "response_data": [
            {
                "name": "Complete the look",
                "description": "Shoes and a bag",
                "categories": [{"category": "shoes", "products": []}, {"category": "bags", "products": []}],
            }
        ],
    }


def test_bundle_recommendations_fill_filter_and_boost(client: TestClient) -> None:
    body = {
        "productId": "p0",
        "containerId": "bundles",
        "perCategory": 2,
        "actions": [
            {"type": "FILTER", "condition": {"op": "ne", "field": "id", "value": "p5"}},
            {"type": "BOOST", "weight": 1, "condition": {"op": "eq", "field": "id", "value": "p7"}},
        ],
    }
    r = client.post("/bundles/recommendations", params=T, json=body)
    assert r.status_code == 200, r.text
    cats = {
        c["category"]: [p["id"] for p in c["products"]] for c in r.json()["response_data"][0]["categories"]
    }
    assert cats == {"shoes": ["p1", "p2"], "bags": ["p7", "p4"]}  # seed and filtered item left out


def test_bundle_errors(client: TestClient) -> None:
    r = client.get("/bundles", params={**T, "productId": "p0", "containerId": "nope"})
    assert r.status_code == 404 and r.json()["error"]["code"] == "container_not_found"
    r = client.get("/bundles", params=T)
    assert r.status_code == 422 and r.json()["success"] is False
    r = client.post("/bundles/recommendations", params=T, json={"productId": "p0", "strategy": "random"})
    assert r.status_code == 422
