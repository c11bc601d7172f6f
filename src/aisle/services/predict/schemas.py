"""Request and response bodies of the predict service (interface spec "PredictRequest", "PredictResponse").

Field names are the spec's own (camelCase). Every answer, errors included, is the envelope
``{"success", "response_data", "error"}``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from aisle.core.validation import ExternalId, ResourceId
from aisle.recs.models.bundles import BundleCategory
from aisle.recs.serving import PredictAction
from aisle.services.common.predict_request import PredictRequest
from aisle.services.common.schemas import ErrorObject

Id = ExternalId


class EvaluationRequest(PredictRequest):
    """Body of ``POST /evaluation``: PredictRequest fields plus the model to evaluate."""

    containerId: ResourceId | None = Field(default=None, description="Ignored: the model is named directly.")  # type: ignore[assignment]
    modelType: str = Field(description="The model's type, e.g. CUSTOMERS_ALSO_VIEW.")
    modelName: ResourceId = Field(description="The model's id.")
    k: Annotated[int, Field(ge=1, le=100)] = Field(default=20, description="Items to return.")


class RecommendationItem(BaseModel):
    """One recommendation. ``label`` is good / better / best for GOOD_BETTER_BEST models."""

    id: str
    name: str | None = None
    description: str | None = None
    score: float | None = None
    price: float | None = None
    label: str | None = None
    explanation: dict[str, Any] | None = Field(
        default=None,
        description="With debug: modelId, modelType, modelVersion, slotConfigId, modelScore, rules "
        "(index, type, weight of each action that matched), brandAffinity, backfill, backfillFrom "
        "(neighbours, category, category:popular, category:trending, popular, trending or filter), "
        "sessionLength.",
    )


class ExperimentServed(BaseModel):
    experimentId: str
    variantId: str


class PredictResponse(BaseModel):
    success: bool = True
    response_data: list[RecommendationItem]
    error: ErrorObject | None = None
    attributionToken: str | None = Field(
        default=None,
        max_length=128,
        description="Opaque token of this answer: send it as `attributionToken` (with the product's "
        "`position`) on the shopper's click and purchase events, so analytics credits them to it.",
    )
    experiments: list[ExperimentServed] | None = Field(
        default=None,
        description="The A/B experiments on recommendations the visitor is in and their variant "
        "(present only for a request naming a visitorId while such an experiment runs).",
    )


class EvaluationResult(BaseModel):
    modelId: str
    modelType: str
    modelVersion: int
    metrics: dict[str, float]
    items: list[RecommendationItem]


class EvaluationResponse(BaseModel):
    success: bool = True
    response_data: EvaluationResult
    error: ErrorObject | None = None


class ProductBundle(BaseModel):
    """A bundle plan (spec "ProductBundle"); GET /bundles returns it with empty ``products``."""

    name: str
    description: str = ""
    categories: list[BundleCategory]


class BundlesResponse(BaseModel):
    success: bool = True
    response_data: list[ProductBundle]
    error: ErrorObject | None = None


class BundleRecommendationRequest(BaseModel):
    """Body of ``POST /bundles/recommendations`` (spec "BundleRecommendationRequest")."""

    model_config = ConfigDict(extra="forbid")

    productId: Id = Field(description="Seed product.")
    containerId: ResourceId | None = Field(
        default=None,
        description="Container whose BUNDLE_RECOMMENDATIONS slot serves; default: the tenant's "
        "deployed bundle model.",
    )
    bundles: Annotated[list[ProductBundle], Field(max_length=20)] | None = Field(
        default=None, description="Plans to fill (typically from GET /bundles); default: the model's plans."
    )
    strategy: Literal["hybrid", "fbt", "top_products"] = "hybrid"
    perCategory: Annotated[int, Field(ge=1, le=20)] = Field(default=3, description="Candidates per category.")
    visitorId: Id | None = None
    userId: Id | None = None
    actions: Annotated[list[PredictAction], Field(max_length=50)] = Field(default_factory=list)
