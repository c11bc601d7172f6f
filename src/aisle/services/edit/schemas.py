"""Request and response bodies of the edit service (spec "Recommendation edit service").

Errors use the standard envelope ``{"error": {"code", "message", "details"}}``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from aisle.recs.containers import ID_PATTERN, ContainerBody
from aisle.recs.deployments import Deployment
from aisle.recs.registry import ModelRecord

Id = Annotated[str, Field(min_length=1, max_length=256)]


class ModelView(ModelRecord):
    """A registry record with its serving state (``deployment`` is null when never deployed)."""

    deployment: Deployment | None = None


class ModelList(BaseModel):
    models: list[ModelView]


class ContainerCreate(ContainerBody):
    """Body of ``POST /containers``."""

    containerId: Annotated[str, Field(pattern=ID_PATTERN, description="Unique id of the container.")]


class ContainerReplace(ContainerBody):
    """Body of ``PUT /containers/{id}``: the whole container and the ``version`` it replaces."""

    version: Annotated[int, Field(ge=1, description="The current version; a stale one gets 409.")]


class EventIn(BaseModel):
    """One visitor session event."""

    model_config = ConfigDict(extra="forbid")

    visitorId: Id
    eventType: Annotated[str, Field(min_length=1, max_length=64, description="One of GET /events/types.")]
    productId: Id
    timestamp: datetime | float = Field(
        description="ISO-8601 (a zone is advised; none means UTC) or Unix epoch seconds.",
        examples=["2019-10-01T00:00:00Z", 1569888000],
    )
    userId: Id | None = None
    sessionId: Id | None = None
    quantity: Annotated[float, Field(ge=0, le=1e6)] | None = None
    price: Annotated[float, Field(ge=0, le=1e9)] | None = None

    @field_validator("timestamp")
    @classmethod
    def _sane_time(cls, value: datetime | float) -> datetime | float:
        if isinstance(value, int | float) and not 0 <= value < 1e11:
            raise ValueError("epoch seconds must be between 0 and 1e11")
        return value

    def epoch(self) -> float:
        if isinstance(self.timestamp, datetime):
            ts = self.timestamp if self.timestamp.tzinfo else self.timestamp.replace(tzinfo=UTC)
            return ts.timestamp()
        return float(self.timestamp)


class EventBatch(BaseModel):
    """The batch form of ``POST /events``."""

    model_config = ConfigDict(extra="forbid")

    events: Annotated[list[EventIn], Field(min_length=1, max_length=10_000)]


class EventsAccepted(BaseModel):
    accepted: int


class EventOut(BaseModel):
    visitorId: str
    eventType: str
    productId: str
    timestamp: float = Field(description="Unix epoch seconds.")
    userId: str | None = None
    sessionId: str | None = None
    quantity: float | None = None
    price: float | None = None


class EventList(BaseModel):
    visitorId: str
    events: list[EventOut] = Field(description="Newest first.")


class EventTypes(BaseModel):
    eventTypes: list[str]


class UserFeaturesIn(BaseModel):
    """A user's feature vector; ``brand_affinity`` (brand -> weight, any scale) drives personalisation."""

    model_config = ConfigDict(extra="forbid")

    userId: Id
    features: dict[str, Any] = Field(
        description="Free-form JSON object (max 64 KiB).",
        examples=[{"brand_affinity": {"Nike": 0.8, "Puma": 0.2}}],
    )

    @field_validator("features")
    @classmethod
    def _small(cls, value: dict[str, Any]) -> dict[str, Any]:
        import orjson

        if len(orjson.dumps(value)) > 65_536:
            raise ValueError("features must serialise to at most 64 KiB")
        affinity = value.get("brand_affinity")
        if affinity is not None and not (
            isinstance(affinity, dict) and all(isinstance(v, int | float) for v in affinity.values())
        ):
            raise ValueError("brand_affinity must map brand names to numbers")
        return value


class UserFeaturesStored(BaseModel):
    userId: str
    stored: bool = True
