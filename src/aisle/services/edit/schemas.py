"""Request and response bodies of the edit service (spec "Recommendation edit service").

Errors use the standard envelope ``{"error": {"code", "message", "details"}}``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from aisle.core.validation import ATTRIBUTION_TOKEN_PATTERN, ExternalId, ResourceId, check_json_value
from aisle.recs.containers import ContainerBody
from aisle.recs.deployments import Deployment
from aisle.recs.jobs import Job
from aisle.recs.registry import ModelRecord

Id = ExternalId


class ModelView(ModelRecord):
    """A registry record with its serving state (``deployment`` is null when never deployed)."""

    deployment: Deployment | None = None


class ModelList(BaseModel):
    models: list[ModelView]


class JobList(BaseModel):
    """The tenant's unfinished jobs, oldest first."""

    jobs: list[Job]


class ContainerCreate(ContainerBody):
    """Body of ``POST /containers``."""

    containerId: Annotated[ResourceId, Field(description="Unique id of the container.")]


class ContainerReplace(ContainerBody):
    """Body of ``PUT /containers/{id}``: the whole container and the ``version`` it replaces.

    What ``GET /containers/{id}`` returns is accepted as it is (read, modify, write): its read-only
    ``createdAt`` and ``updatedAt`` are ignored, and ``containerId``, when present, must be the path's.
    """

    version: Annotated[int, Field(ge=1, description="The current version; a stale one gets 409.")]
    containerId: ResourceId | None = Field(default=None, description="Read-only; if given, the path's id.")
    createdAt: datetime | None = Field(default=None, description="Read-only; ignored.")
    updatedAt: datetime | None = Field(default=None, description="Read-only; ignored.")

    READ_ONLY: ClassVar[set[str]] = {"version", "containerId", "createdAt", "updatedAt"}


class EventIn(BaseModel):
    """One visitor session event."""

    model_config = ConfigDict(extra="forbid")

    visitorId: Id
    eventType: Annotated[str, Field(min_length=1, max_length=64, description="One of GET /events/types.")]
    productId: Id
    timestamp: datetime | float = Field(
        description="ISO-8601 (a zone is advised; none means UTC) or Unix epoch seconds; from 1970 to one "
        "day past the server's clock.",
        examples=["2019-10-01T00:00:00Z", 1569888000],
    )
    userId: Id | None = None
    sessionId: Id | None = None
    quantity: Annotated[float, Field(ge=0, le=1e6)] | None = None
    price: Annotated[float, Field(ge=0, le=1e9)] | None = None
    eventId: Id | None = Field(
        default=None,
        description="The event's own id: an event sent again with the same id counts once in analytics "
        "(a retry is safe). Default: a new id.",
    )
    attributionToken: str | None = Field(
        default=None,
        pattern=ATTRIBUTION_TOKEN_PATTERN,
        description="The `attributionToken` of the answer (search or recommendations) the shopper acted "
        "on: a click or purchase carrying it counts for that answer in analytics.",
    )
    position: Annotated[int, Field(ge=1, le=1000)] | None = Field(
        default=None, description="The product's 1-based position in that answer (needs attributionToken)."
    )

    def epoch(self) -> float:
        """The timestamp in Unix epoch seconds."""
        return _epoch(self.timestamp)


def _epoch(value: datetime | float) -> float:
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    return float(value)


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
    eventId: str | None = None
    attributionToken: str | None = None
    position: int | None = None


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
        description="Free-form JSON object (max 64 KiB, nesting up to 32 levels, numbers finite and "
        "within +-2^53).",
        examples=[{"brand_affinity": {"Nike": 0.8, "Puma": 0.2}}],
    )

    @field_validator("features")
    @classmethod
    def _small(cls, value: dict[str, Any]) -> dict[str, Any]:
        import orjson

        check_json_value(value, where="features")
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
