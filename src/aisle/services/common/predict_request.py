"""The body of ``POST /predict`` (spec "PredictRequest"), shared by the predict service and the search
service's ``POST /recommendations``, which validates it and relays it to predict unchanged.

Field names are the spec's own (camelCase).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from aisle.core.stock import STORE_ID_PATTERN
from aisle.core.validation import ExternalId, ResourceId
from aisle.recs.serving import MAX_ACTIONS, PredictAction

Id = ExternalId


class PredictParams(BaseModel):
    """``predictParams``: serving options. Unknown keys are ignored."""

    model_config = ConfigDict(extra="ignore")

    returnProduct: bool = Field(default=False, description="Add the product's name, description and price.")
    returnScore: bool = Field(default=True, description="Add each item's final score.")
    strictFiltering: bool = Field(
        default=False,
        description="When FILTER actions leave fewer items than asked: true returns fewer, false backfills "
        "with the best allowed items (the seeds' categories first).",
    )
    diversityLevel: Literal["none", "low", "medium", "high"] | None = Field(
        default=None,
        description="Spread categories and brands with MMR (lambda 1.0 / 0.8 / 0.6 / 0.35); "
        "default: the slot's option, else none.",
    )
    debug: bool = Field(default=False, description="Add an explanation: model, slot and rules of each item.")
    backfillOrder: Literal["popular", "trending", "catalog"] | None = Field(
        default=None,
        description="How a short list (a cold seed, few related items) is backfilled when the tenant has "
        "a popularity artifact (POST /popularity/refresh): popular (the seeds' categories, then the "
        "catalog, most popular first), trending (highest trending first) or catalog (the seeds' "
        "categories in catalog order). Default: the slot's option, else popular. With debug, "
        "explanation.backfillFrom names each backfilled item's source.",
    )
    containerRules: bool = Field(
        default=True,
        description="Apply the container's saved `recommendationRules` before `actions` (the default). "
        "false leaves them out, so only `actions` apply: how the merchandising console previews rules "
        "being edited (like POST /evaluation, it shows nothing a recs:read caller cannot already see).",
    )


class PredictRequest(BaseModel):
    """Body of ``POST /predict``."""

    containerId: ResourceId = Field(description="The container (placement) to serve.")
    productIds: Annotated[list[Id], Field(min_length=1, max_length=100)] = Field(
        description="Seed products, at least one."
    )
    modelIds: Annotated[list[ResourceId], Field(max_length=20)] | None = Field(
        default=None, description="Run only these models of the container (all when omitted)."
    )
    eventType: str | None = Field(
        default=None, description="Context tag, passed through, not used for routing."
    )
    visitorId: Id | None = Field(default=None, description="Enables session personalisation.")
    userId: Id | None = Field(default=None, description="Enables brand-affinity personalisation.")
    storeId: str | None = Field(
        default=None,
        pattern=STORE_ID_PATTERN,
        description="A store (1-64 letters, digits, '_', '.' or '-'): with the tenant's `stock.store` "
        "`filter` (the default) only products that store has in stock (its entry in the product's "
        "`inventories`) are recommended; with `boost` they come first and the rest after. The tenant's "
        "`stock.policy` (show, bury or hide products whose `availability` is OUT_OF_STOCK) applies with "
        "or without it. A malformed id is 422 validation_error.",
        examples=["store-042"],
    )
    predictParams: PredictParams = Field(default_factory=PredictParams)
    actions: Annotated[list[PredictAction], Field(max_length=MAX_ACTIONS)] = Field(
        default_factory=list,
        description="FILTER, BOOST and BURY rules, applied after the container's saved rules "
        "(together at most 50, else 400 value_invalid).",
    )

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "containerId": "similar-items",
                    "productIds": ["15970"],
                    "visitorId": "v-123",
                    "predictParams": {"returnProduct": True, "diversityLevel": "low"},
                    "actions": [
                        {"type": "FILTER", "condition": {"op": "lte", "field": "price", "value": 2000}},
                        {
                            "type": "BOOST",
                            "weight": 0.5,
                            "condition": {"op": "eq", "field": "brand", "value": "Nike"},
                        },
                    ],
                }
            ]
        },
    )
