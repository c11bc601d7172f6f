"""Bundle plans and their product candidates, from a BUNDLE_RECOMMENDATIONS model.

The model (``aisle.recs.models.bundles``) exposes ``plans(product_id) -> list[BundlePlan]`` and
``fill(plans, strategy, per_category, allowed=None, seed=None) -> list[BundlePlan]``; a plan is
``{name, description, categories: [{category, products: [{id, score}]}]}``. :class:`Bundles` picks the
model (a container's bundle slot, else the tenant's deployed bundle model), applies the container's saved
rules for that slot and then the request's actions (FILTER as ``allowed``, BOOST/BURY to the order within
each category), and returns plain dicts. A product deleted through the change log is never a candidate;
the tenant's stock policy hides or buries products out of stock (:mod:`aisle.recs.serving.stock`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from aisle.core.errors import AisleError, ErrorCode, NotFound
from aisle.recs.actions import PredictAction
from aisle.recs.containers import Container
from aisle.recs.model_types import MODEL_TYPES
from aisle.recs.serving.containers import ContainerCache
from aisle.recs.serving.models import ModelSource, ServedModel
from aisle.recs.serving.personal import Personaliser
from aisle.recs.serving.rank import compile_actions
from aisle.recs.serving.saved_rules import with_saved_rules
from aisle.recs.serving.stock import StockRule
from aisle.recs.serving.tenants import TenantCache


class BundleModelNotFound(NotFound):
    code = ErrorCode.BUNDLE_MODEL_NOT_FOUND


class Bundles:
    """The bundles of a predict engine's tenants (spec GET /bundles, POST /bundles/recommendations).

    Shares the engine's caches: ``tenants`` (configuration, product table), ``containers``, ``models``
    and ``personaliser`` (purchases and brand affinity of the visitor). Thread-safe.
    """

    def __init__(
        self,
        tenants: TenantCache,
        containers: ContainerCache,
        models: ModelSource,
        personaliser: Personaliser,
    ) -> None:
        self.tenants = tenants
        self.containers = containers
        self.models = models
        self.personaliser = personaliser

    def model(self, tenant: str, container_id: str | None) -> ServedModel:
        """The serving bundle model: the first bundle slot of ``container_id`` (placement order), else the
        tenant's first deployed BUNDLE_RECOMMENDATIONS model.

        Raises TenantNotFound, ContainerNotFound, BundleModelNotFound (404); with a container, the
        slot model's ModelNotDeployed (409).
        """
        return self._serving(tenant, container_id)[0]

    def _serving(self, tenant: str, container_id: str | None) -> tuple[ServedModel, Container | None, str]:
        """:meth:`model`, with the container it came from and its slot id (None and "" without one)."""
        _, state = self.tenants.get(tenant)
        container: Container | None = None
        if container_id is not None:
            container = self.containers.get(tenant, state.containers, container_id)
            candidates = [
                (s.modelId, s.slotConfigId)
                for s in sorted(container.slotConfigurations, key=lambda s: s.placement)
            ]
        else:
            candidates = [
                (r.model_id, "") for r in self.models.records(tenant, state.scope)
                if MODEL_TYPES[r.model_type].bundles
            ]  # fmt: skip
        for model_id, slot_id in candidates:
            try:
                model = self.models.served(tenant, state.scope, model_id)
            except AisleError:
                if container_id is not None:
                    raise
                continue  # an undeployed bundle model of the tenant: try the next one
            if MODEL_TYPES[model.model_type].bundles:
                return model, container, slot_id
        where = f"container '{container_id}'" if container_id else f"tenant '{tenant}'"
        raise BundleModelNotFound(f"{where} has no deployed BUNDLE_RECOMMENDATIONS model")

    def plans(self, tenant: str, product_id: str, container_id: str | None) -> list[dict[str, Any]]:
        """The bundle plans of ``product_id`` without products (spec GET /bundles).

        Raises as :meth:`model`.
        """
        model = self.model(tenant, container_id)
        out = [as_dict(p) for p in model.recommender.plans(product_id)]  # type: ignore[attr-defined]
        for plan in out:
            for category in plan["categories"]:
                category["products"] = []
        return out

    def recommendations(
        self,
        tenant: str,
        product_id: str,
        container_id: str | None,
        given: Sequence[dict[str, Any]] | None,
        strategy: str,
        per_category: int,
        actions: Sequence[PredictAction],
        visitor_id: str | None = None,
        user_id: str | None = None,
    ) -> tuple[list[dict[str, Any]], list[str]]:
        """Plans filled with up to ``per_category`` candidates each (spec POST /bundles/recommendations),
        and the codes of what they did without (as :attr:`Prediction.degraded`).

        ``given`` plans (request dicts), else the model's plans of ``product_id``. Purchased items of
        ``visitor_id`` are never candidates; BOOST/BURY and brand affinity reorder each category's
        candidates by ``score + weights`` (scores rounded to 6 decimals). With ``container_id``, the
        container's saved rules for the bundle slot (naming no slot, or that one) apply before
        ``actions``.

        Raises as :meth:`model`; BadRequest ``condition_field_unknown`` (400) for an action,
        ``value_invalid`` (400) when the saved rules and ``actions`` are over 50.
        """
        config, state = self.tenants.get(tenant)
        model, container, slot_id = self._serving(tenant, container_id)
        if container is not None:
            actions = with_saved_rules(container, actions, slot_id=slot_id)
        table = self.tenants.table(config, state)
        compiled = compile_actions(actions, table, set())
        personal = self.personaliser.personal(tenant, config, table, visitor_id, user_id)
        filters = [a for a in compiled if a.type == "FILTER"]
        shapers = [a for a in compiled if a.type != "FILTER"]
        stock = StockRule.of(config.global_.stock, None)

        def allowed(item: str) -> bool:
            if item == product_id or item in personal.purchased or item in table.gone:
                return False
            if stock is not None and not stock.allows(table, table.row(item)):
                return False
            if not filters:
                return True
            row = table.row(item)
            return row is not None and all(f.matches(row) for f in filters)

        def tier(item: str) -> int:
            return 0 if stock is None else stock.tier(table, table.row(item))

        recommender: Any = model.recommender
        base = recommender.plans(product_id) if given is None else to_model_plans(given)
        filled = [
            as_dict(p)
            for p in recommender.fill(base, strategy, per_category, allowed=allowed, seed=product_id)
        ]
        for plan in filled:
            for category in plan["categories"]:
                products = [p for p in category["products"] if allowed(str(p["id"]))]
                for p in products:
                    row = table.row(str(p["id"]))
                    score = float(p.get("score") or 0.0)
                    if row is not None:
                        for a in shapers:
                            if a.matches(row):
                                score += a.weight if a.type == "BOOST" else -a.weight
                        brand = table.brand(row)
                        score += personal.affinity_weight * personal.brand_affinity.get(str(brand), 0.0)
                    p["score"] = round(score, 6)
                products.sort(key=lambda p: (tier(str(p["id"])), -p["score"]))
                category["products"] = products[:per_category]
        return filled, [personal.degraded] if personal.degraded else []


def as_dict(plan: Any) -> dict[str, Any]:
    """A plan (pydantic model, dataclass or dict) as ``{name, description, categories}`` dicts."""
    if hasattr(plan, "model_dump"):
        raw = plan.model_dump()
    elif dataclasses.is_dataclass(plan):
        raw = dataclasses.asdict(plan)  # type: ignore[arg-type]
    else:
        raw = dict(plan)
    categories = []
    for c in raw.get("categories", []):
        products = [
            {"id": str(p["id"]), "score": p.get("score")} if isinstance(p, dict) else {"id": str(p)}
            for p in c.get("products", [])
        ]
        categories.append({"category": str(c["category"]), "products": products})
    return {"name": raw.get("name", ""), "description": raw.get("description", ""), "categories": categories}


def to_model_plans(given: Sequence[dict[str, Any]]) -> list[Any]:
    """Request plans as the bundle model's ``BundlePlan`` objects."""
    from aisle.recs.models.bundles import BundlePlan

    return [BundlePlan.model_validate(p) for p in given]
