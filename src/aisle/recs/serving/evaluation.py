"""``POST /evaluation``: one named model, deployed or not, through the same ranking as ``POST /predict``.

For quality checks before a model is attached to a container: the items come from one evaluation slot
(``k`` items, the request's actions and personalisation), beside the model's offline metrics from its
registry record. The offline protocols themselves are :mod:`aisle.recs.evaluation.protocols`.
"""

from __future__ import annotations

from typing import Any

from aisle.core.errors import BadRequest, ErrorCode
from aisle.recs.containers import SlotConfig
from aisle.recs.serving.items import item_out
from aisle.recs.serving.models import ModelSource
from aisle.recs.serving.personal import Personaliser
from aisle.recs.serving.query import PredictQuery
from aisle.recs.serving.rank import RankOptions, compile_actions, rank_slot
from aisle.recs.serving.stock import StockRule
from aisle.recs.serving.tenants import TenantCache


class ModelEvaluation:
    """Evaluates named models of a predict engine's tenants, sharing its caches. Thread-safe."""

    def __init__(self, tenants: TenantCache, models: ModelSource, personaliser: Personaliser) -> None:
        self.tenants = tenants
        self.models = models
        self.personaliser = personaliser

    def evaluate(
        self, tenant: str, q: PredictQuery, model_type: str, model_name: str, k: int = 20
    ) -> dict[str, Any]:
        """``{modelId, modelType, modelVersion, metrics, items, degraded}``: up to ``k`` :class:`ItemOut`
        of ``model_name`` for ``q`` (its container is ignored), the record's metrics, and the codes of
        what the items did without (as :attr:`Prediction.degraded`).

        Raises ModelNotFound (404), BadRequest ``model_type_mismatch`` (400) when ``model_type`` is not
        the model's type, BadRequest ``action_slot_unknown`` or ``condition_field_unknown`` (400) for an
        action.
        """
        config, state = self.tenants.get(tenant)
        model = self.models.served(tenant, state.scope, model_name, require_deployed=False)
        if model.model_type.value != model_type:
            raise BadRequest(
                f"model '{model_name}' is a {model.model_type.value} model, not {model_type}",
                code=ErrorCode.MODEL_TYPE_MISMATCH,
                details={"modelName": model_name, "modelType": model.model_type.value},
            )
        table = self.tenants.table(config, state)
        slot = SlotConfig(slotConfigId="evaluation", modelId=model_name, itemCount=k)
        actions = compile_actions(q.actions, table, {slot.slotConfigId})
        personal = self.personaliser.personal(tenant, config, table, q.visitor_id, q.user_id)
        stock = StockRule.of(config.global_.stock, q.store_id)
        options = RankOptions.of(q.params, self.tenants.popularity(state), stock)
        ranked = rank_slot(slot, model, q.seeds, table, actions, personal, set(), options)
        return {
            "modelId": model.model_id,
            "modelType": model.model_type.value,
            "modelVersion": model.version,
            "metrics": model.metrics,
            "items": [item_out(r, table, q.params, personal) for r in ranked],
            "degraded": [personal.degraded] if personal.degraded else [],
        }
