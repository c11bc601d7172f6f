"""An experiment as a merchandiser writes it and as it is stored.

JSON field names are camelCase like the rest of the public API. An experiment has 2 to 5 variants; the
first is the control (what shoppers get outside the experiment, normally with no changes). Each variant
has a traffic ``weight`` (relative: weights 1 and 1 split 50/50) and :class:`Changes`, what it changes
for the visitors assigned to it. The life cycle is ``draft`` -> ``running`` -> ``stopped``; a running or
stopped experiment may be ``promoted``: one variant's changes become the tenant's live setting.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from aisle.core.validation import ID_PATTERN, is_resource_id

MAX_VARIANTS = 5
Status = Literal["draft", "running", "stopped", "promoted"]
Metric = Literal["conversionRate", "clickThroughRate", "revenuePerVisitor"]
Surface = Literal["search", "recommendations"]
VariantId = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")]
ResourceId = Annotated[str, Field(pattern=ID_PATTERN)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class HybridChange(_Strict):
    """The hybrid retrieval stage for a variant: ``enabled`` on or off, ``blendWeight`` the score
    blend's embedding weight (0..1); a field left out keeps the tenant's setting."""

    enabled: bool | None = None
    blendWeight: Annotated[float, Field(ge=0, le=1)] | None = None


class ContainerChange(_Strict):
    """A recommendation container for a variant: ``slots`` maps a slot's position (0-based, as a
    string) to the model id it serves instead; ``rulesOff`` drops the container's rules (rule ids;
    ``["*"]`` all of them)."""

    slots: dict[str, ResourceId] = Field(default_factory=dict, max_length=20)
    rulesOff: list[str] = Field(default_factory=list, max_length=50)

    @field_validator("slots")
    @classmethod
    def _positions(cls, slots: dict[str, str]) -> dict[str, str]:
        # a rule the OpenAPI schema cannot state (key patterns): a ValueError, answered 400
        bad = [k for k in slots if not (k.isascii() and k.isdigit() and len(k) <= 2)]
        if bad:
            raise ValueError(f'slot positions are 0-based numbers such as "0", not {bad[0]!r}')
        return slots


class Changes(_Strict):
    """What a variant changes (nothing, for a plain control).

    Attributes:
        rulesOff, rulesOn: merchandising rule ids switched off, or on (a stored, disabled rule).
        hybrid: the hybrid stage (see :class:`HybridChange`).
        ranker: the learned ranker: a version number, ``"none"`` (no reranking), or None (the live one).
        settings: a partial ``global_configuration`` (e.g. ``{"stages": {"min_hits": 5}}``), merged
            over the tenant's; validated against the tenant's file on save.
        containers: recommendation containers by id (see :class:`ContainerChange`).
    """

    rulesOff: list[ResourceId] = Field(default_factory=list, max_length=100)
    rulesOn: list[ResourceId] = Field(default_factory=list, max_length=100)
    hybrid: HybridChange | None = None
    ranker: Annotated[int, Field(ge=1)] | Literal["none"] | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    containers: dict[str, ContainerChange] = Field(default_factory=dict, max_length=20)

    @field_validator("containers")
    @classmethod
    def _container_ids(cls, containers: dict[str, ContainerChange]) -> dict[str, ContainerChange]:
        bad = [k for k in containers if not is_resource_id(k)]
        if bad:
            raise ValueError(f"{bad[0]!r} is not a container id (letters, digits, _ . -)")
        return containers

    def changes_search(self) -> bool:
        return bool(self.rulesOff or self.rulesOn or self.hybrid or self.ranker is not None or self.settings)


class Variant(_Strict):
    """One arm: ``id`` (e.g. ``control``, ``b``), a ``weight`` (relative share of traffic, > 0)."""

    id: VariantId
    name: str = Field(default="", max_length=200)
    weight: Annotated[float, Field(gt=0, le=1000)] = 1.0
    changes: Changes = Field(default_factory=Changes)


class ExperimentBody(_Strict):
    """What a client sends to create or replace an experiment (a draft)."""

    name: Annotated[str, Field(min_length=1, max_length=200)]
    description: str = Field(default="", max_length=2000)
    surface: Surface = "search"
    variants: list[Variant] = Field(min_length=2, max_length=MAX_VARIANTS)
    primaryMetric: Metric = "conversionRate"
    minimumDetectableEffect: Annotated[float, Field(gt=0, le=10)] = Field(
        default=0.05, description="Relative lift the test should detect (0.05: +5%), for the sample size."
    )

    @model_validator(mode="after")
    def _distinct_ids(self) -> ExperimentBody:
        ids = [v.id for v in self.variants]
        if len(set(ids)) != len(ids):
            raise ValueError("variant ids must be distinct")
        return self


class HistoryEntry(BaseModel):
    """One event of the experiment's life: ``created``, ``replaced``, ``started``, ``stopped``,
    ``promoted`` (``variant`` says which) at ``at``."""

    action: str
    at: datetime
    variant: str | None = None


class Experiment(ExperimentBody):
    """A stored experiment: the body plus its id, version, status, salt and dates.

    ``salt`` (random, fixed at creation) feeds the assignment hash, so two experiments on one tenant
    split visitors independently. ``startedAt``/``stoppedAt`` bound the results' period.
    """

    id: ResourceId
    version: int
    status: Status = "draft"
    salt: str
    createdAt: datetime
    updatedAt: datetime
    startedAt: datetime | None = None
    stoppedAt: datetime | None = None
    promotedVariant: str | None = None
    simulated: bool = Field(default=False, description="Its traffic was simulated (the demo).")
    history: list[HistoryEntry] = Field(default_factory=list)

    @property
    def control(self) -> Variant:
        return self.variants[0]

    def variant(self, variant_id: str) -> Variant | None:
        return next((v for v in self.variants if v.id == variant_id), None)

    def weights(self) -> list[float]:
        """The variants' traffic shares, summing to 1."""
        total = sum(v.weight for v in self.variants)
        return [v.weight / total for v in self.variants]
