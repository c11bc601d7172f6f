"""Response models shared by every service (documented in each OpenAPI schema)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class ErrorObject(BaseModel):
    code: str = Field(description="Stable snake_case error code, e.g. tenant_not_found.")
    message: str = Field(description="What was wrong, naming the field or value.")
    details: Any = None


class ErrorEnvelope(BaseModel):
    error: ErrorObject


class Health(BaseModel):
    status: str = Field(default="ok", examples=["ok"])
    service: str
    version: str
