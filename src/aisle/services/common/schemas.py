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


class Health(BaseModel):
    status: str = Field(default="ok", examples=["ok"])
    service: str
    version: str
