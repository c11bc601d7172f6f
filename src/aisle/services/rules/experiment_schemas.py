"""Request and response bodies of the experiments API (rules service)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from aisle.experiments.model import Experiment, ExperimentBody, Metric


class ExperimentReplace(ExperimentBody):
    """Body of ``PUT /experiments/{id}``: the whole new draft and the version it replaces."""

    version: int = Field(ge=1, description="The version read; stale gets 409.")


class Promote(BaseModel):
    """Body of ``POST /experiments/{id}/promote``: the variant whose changes become live."""

    variant: str = Field(min_length=1, max_length=32, examples=["b"])


class ExperimentList(BaseModel):
    experiments: list[Experiment]


class ExperimentVersionOut(BaseModel):
    version: int
    deleted: bool
    experiment: Experiment | None = None


class ExperimentHistory(BaseModel):
    """Every stored version of an experiment, newest first (each status change is one)."""

    experimentId: str
    versions: list[ExperimentVersionOut]


class EstimateOut(BaseModel):
    """A figure with its 95% interval (null when there is too little data)."""

    value: float | None
    low: float | None = None
    high: float | None = None


class ComparisonOut(BaseModel):
    """Treatment minus control, its 95% interval, relative lift, p-value, BH-adjusted p-value."""

    diff: float | None
    low: float | None
    high: float | None
    lift: float | None
    pValue: float | None
    pAdjusted: float | None
    significant: bool


class VariantResult(BaseModel):
    id: str
    name: str
    control: bool
    weight: float = Field(description="Configured share of traffic (0..1).")
    visitors: int
    searches: int = Field(description="Answers shown to the variant's visitors (searches or lists).")
    conversionRate: EstimateOut = Field(description="Share of visitors with an attributed purchase.")
    clickThroughRate: EstimateOut = Field(description="Answers with a click / answers (delta method).")
    revenuePerVisitor: EstimateOut = Field(description="Winsorised revenue per visitor (Welch).")
    vsControl: dict[str, ComparisonOut] | None = None


class SampleRatioOut(BaseModel):
    """Chi-square of visitors per variant against the weights; ``mismatch`` when p < 0.001."""

    chi2: float | None
    pValue: float | None
    mismatch: bool


class SampleSize(BaseModel):
    """Visitors per variant to detect ``minimumDetectableEffect`` (relative) on ``baseline`` conversion
    with a two-sided test, alpha 0.05, power 0.8."""

    baseline: float
    minimumDetectableEffect: float
    visitorsPerVariant: int
    visitorsTotal: int


class PlannedSample(BaseModel):
    """Visitors per variant the test needs to detect its ``minimumDetectableEffect`` (relative) on its
    primary metric at the control's observed figure (``baseline``), two-sided, alpha 0.05, power 0.8."""

    metric: Metric = Field(description="The primary metric the sample is planned for.")
    baseline: float = Field(description="The control's figure on that metric.")
    minimumDetectableEffect: float
    visitorsPerVariant: int
    visitorsTotal: int = Field(description="visitorsPerVariant over the smallest variant's share.")
    reached: bool = Field(description="Every variant has visitorsPerVariant: the test is complete.")


class ExperimentResults(BaseModel):
    """Per-variant figures, each treatment against control, the SRM check and the winner."""

    experimentId: str
    status: str
    simulated: bool = Field(description="The traffic was simulated (the demo), not shoppers.")
    primaryMetric: Metric
    variants: list[VariantResult]
    sampleRatio: SampleRatioOut
    winsorCap: float | None = Field(description="Revenue per visitor above this was capped (99th pct).")
    winner: str | None = Field(description="The winning variant on the primary metric, null: undecided.")
    sampleSize: PlannedSample | None = Field(
        default=None,
        description="The sample the primary metric needs, from the control's figure (null while it is "
        "unknown, 0 or constant).",
    )
