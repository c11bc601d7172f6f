"""Response models shared by every service (documented in each OpenAPI schema)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class ErrorObject(BaseModel):
    code: str = Field(description="Stable snake_case error code, e.g. tenant_not_found.")
    message: str = Field(description="What was wrong, naming the field or value.")
    details: Any = None
    requestId: str | None = Field(
        default=None,
        description="The request's id, also in the X-Request-Id response header: quote it when reporting.",
    )


class ErrorEnvelope(BaseModel):
    error: ErrorObject


class PredictErrorEnvelope(BaseModel):
    """Every failure of the predict service: ``success`` false, empty ``response_data``, the error object."""

    success: Literal[False] = False
    response_data: list[Any] = Field(default_factory=list)
    error: ErrorObject


class BuildStatus(BaseModel):
    """One background build of a tenant's heavy artifact (see ``aisle.core.builds``)."""

    artifact: str = Field(
        description="traffic, text_vectors, image_vectors, similar_items or ranker.",
        examples=["text_vectors"],
    )
    state: Literal["queued", "running", "done", "failed", "interrupted"] = Field(
        description="interrupted: its builder stopped before the end; the next one starts it again."
    )
    percent: int = Field(ge=0, le=100)
    etaSeconds: int | None = Field(default=None, description="Seconds left (linear estimate), if known.")
    message: str = Field(default="", description="The current step, or why the build failed.")


class Health(BaseModel):
    """``GET /health``: the process answers. ``builds`` lists, per tenant, the background builds of
    heavy artifacts (read from small local files, cached for a second): until one is ``done`` its
    feature answers as documented meanwhile (lexical search, 503 ``vectors_building``, ...)."""

    status: str = Field(default="ok", examples=["ok"])
    service: str
    version: str
    builds: dict[str, list[BuildStatus]] = Field(
        default_factory=dict, description="tenant -> its background builds (none: nothing recorded)."
    )
