"""Process settings, read from the environment with the ``AISLE_`` prefix.

Per-tenant configuration (the five JSON files) lives in :mod:`aisle.core.tenant_config`;
this module holds only what one process needs to start: where storage is, ports, switches.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Settings shared by every Aisle service and the CLI.

    Every field can be set as ``AISLE_<FIELD>`` (for example ``AISLE_STORAGE_URL``).
    """

    model_config = SettingsConfigDict(env_prefix="AISLE_", extra="ignore")

    storage_url: str = Field(
        default="file://./var/bucket",
        description="Object storage holding tenant configuration, catalogs, rules and model artifacts: "
        "file://DIR or s3://BUCKET (S3 options from AISLE_S3_* / AWS_* variables).",
    )
    data_dir: Path = Field(
        default=Path("./var/data"),
        description="Local directory for derived state: full-text and vector indexes, caches.",
    )
    redis_url: str | None = Field(
        default=None, description="redis://host:port/db; unset means embedded stores."
    )
    auth: Literal["on", "off"] = Field(default="on", description="Token validation on every service.")
    auth_url: str = Field(default="http://127.0.0.1:8086", description="Base URL of the token service.")
    predict_url: str = Field(
        default="http://127.0.0.1:8081", description="Predict service, for /recommendations."
    )
    vector_url: str | None = Field(default=None, description="Vector search service; unset means in-process.")
    s3_endpoint: str | None = Field(default=None, description="Endpoint of an S3-compatible server.")
    s3_region: str = "us-east-1"
    s3_access_key_id: str | None = None
    s3_secret_access_key: str | None = None
    host: str = "127.0.0.1"
    search_port: int = 8080
    predict_port: int = 8081
    proxy_port: int = 8082
    vector_port: int = 8083
    edit_port: int = 8084
    rules_port: int = 8085
    auth_port: int = 8086
    typesense_port: int = Field(
        default=8108, description="The demo's local Typesense server (`aisle serve`), the fashion fallback."
    )
    workers: int = Field(
        default=2, ge=1, description="Worker processes per service started by `aisle serve`."
    )
    container_cache_seconds: float = Field(
        default=2.0,
        ge=0,
        description="Predict service: seconds a container read from storage (or its absence) is reused, "
        "so a container edit is seen by predict at most this long after it is written; 0 reads it on "
        "every request.",
    )


def load_settings(**overrides: object) -> Settings:
    """Build settings from the environment, with keyword overrides taking precedence."""
    return Settings(**overrides)  # type: ignore[arg-type]
