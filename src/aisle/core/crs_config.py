"""``crs_config.json``: the tenant's external retail search service (spec "Tenant configuration files").

One file chooses the backend (``backend.type``: ``typesense`` or ``google_retail``), how to reach it, and
when the search pipeline's last stage falls back to it (``fallback``). The catalog-search proxy service
(port 8082) answers from the same backend. Secrets never sit in the file: ``api_key`` and
``credentials`` are a :class:`SecretRef`, the name of an environment variable or the path of a file
read when the backend is opened (``aisle.search.external.resolver``).

Example (Typesense, fall back when Aisle finds fewer than 3 products, appending)::

    {"version": 1, "enabled": true,
     "backend": {"type": "typesense", "url": "http://127.0.0.1:8108", "collection": "products",
                 "api_key": {"env": "AISLE_TYPESENSE_API_KEY"}, "query_by": ["title", "brand"]},
     "fallback": {"when": ["no_results", "few_results"], "min_results": 3, "merge": "append"}}

The first shape of this file (``timeout_ms`` and ``min_results`` at the top, ``endpoint``, ``project``,
``catalog``) still loads: the two numbers move into ``fallback``; the three names must move into a backend.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SecretRef(_Strict):
    """Where a secret is read from: exactly one of ``env`` (an environment variable's name) or ``file``
    (a path whose content, stripped of surrounding whitespace, is the secret)."""

    env: Annotated[str | None, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")] = None
    file: Annotated[str | None, Field(min_length=1, max_length=4096)] = None

    @model_validator(mode="after")
    def _one(self) -> SecretRef:
        if (self.env is None) == (self.file is None):
            raise ValueError("give exactly one of 'env' (variable name) or 'file' (path)")
        return self


class TypesenseBackendConfig(_Strict):
    """A Typesense collection (https://typesense.org/docs/0.24.1/api/). Documents carry the tenant's
    attribute names; ``id_field`` holds the product id, ``query_by`` the fields searched, in weight order."""

    type: Literal["typesense"]
    url: Annotated[str, Field(pattern=r"^https?://[^/\s]+/?$", examples=["http://127.0.0.1:8108"])]
    collection: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,128}$")]
    api_key: SecretRef
    query_by: Annotated[list[str], Field(min_length=1, max_length=32)]
    query_by_weights: list[Annotated[int, Field(ge=0, le=127)]] | None = None
    id_field: str = "id"
    price_field: str = Field(default="price", description="The field price_asc/price_desc sort by.")

    @model_validator(mode="after")
    def _weights(self) -> TypesenseBackendConfig:
        if self.query_by_weights is not None and len(self.query_by_weights) != len(self.query_by):
            raise ValueError("query_by_weights needs one weight per query_by field")
        return self


class VisionProductSearchConfig(_Strict):
    """Google Cloud Vision API Product Search (``images:annotate`` with ``productSearchParams``), the
    photo search of a ``google_retail`` backend (Retail v2 has none)."""

    product_set: Annotated[str, Field(min_length=1, description="projects/*/locations/*/productSets/*")]
    product_categories: list[str] = Field(default_factory=lambda: ["apparel-v2"])
    endpoint: str | None = Field(default=None, description="Host[:port]; default vision.googleapis.com.")


class GoogleRetailBackendConfig(_Strict):
    """Google Cloud Retail (Vertex AI Search for commerce) through ``google-cloud-retail``'s REST
    transport: ``servingConfigs/*:search`` and ``catalogs/*:completeQuery``."""

    type: Literal["google_retail"]
    project: Annotated[str, Field(min_length=1)]
    location: str = "global"
    catalog: str = "default_catalog"
    branch: str = "default_branch"
    serving_config: str = "default_search"
    endpoint: str | None = Field(default=None, description="Host[:port]; default retail.googleapis.com.")
    url_scheme: Literal["https", "http"] = "https"
    credentials: SecretRef | None = Field(
        default=None, description="A service account key (JSON); none: Application Default Credentials."
    )
    vision: VisionProductSearchConfig | None = None


ExternalBackendConfig = Annotated[
    TypesenseBackendConfig | GoogleRetailBackendConfig, Field(discriminator="type")
]

FallbackTrigger = Literal["no_results", "few_results", "rule", "error"]
"""When the search pipeline asks the external service: ``no_results`` (Aisle found nothing),
``few_results`` (fewer than ``min_results``), ``rule`` (a merchandising rule's ``external`` action or a
query in ``queries``), ``error`` (an Aisle stage failed; the fallback still answers)."""


class BreakerConfig(_Strict):
    """Per-tenant circuit breaker (pybreaker): opens after ``fail_max`` consecutive failures, lets one
    trial call through after ``reset_timeout_s``."""

    fail_max: Annotated[int, Field(ge=1, le=1000)] = 5
    reset_timeout_s: Annotated[float, Field(ge=0.1, le=3600)] = 30.0


def _on_no_results() -> list[FallbackTrigger]:
    return ["no_results"]


class FallbackConfig(_Strict):
    """The search pipeline's fallback stage (``aisle.search.stages.fallback``)."""

    when: list[FallbackTrigger] = Field(default_factory=_on_no_results)
    min_results: Annotated[int, Field(ge=0, le=1000)] = Field(
        default=0, description="few_results: fall back when Aisle found fewer products than this."
    )
    queries: list[Annotated[str, Field(min_length=1, max_length=256)]] = Field(
        default_factory=list,
        description="rule: normalised queries always sent to the external service (exact match).",
    )
    merge: Literal["replace", "append"] = Field(
        default="append",
        description="replace: the external results stand in for Aisle's; append: after Aisle's, "
        "without products Aisle already returned.",
    )
    timeout_ms: Annotated[int, Field(ge=10, le=10_000)] = Field(
        default=800, description="The external call's budget, cut to what is left of the search deadline."
    )
    max_concurrency: Annotated[int, Field(ge=1, le=1024)] = 8
    cache_ttl_s: Annotated[float, Field(ge=0, le=3600)] = Field(
        default=30.0, description="How long an external answer is reused for the same request (0: never)."
    )
    cache_size: Annotated[int, Field(ge=1, le=100_000)] = 1024
    breaker: BreakerConfig = Field(default_factory=BreakerConfig)


class CrsConfig(_Strict):
    """``crs_config.json``: the external retail search service (proxy service and search fallback).

    ``enabled`` false (the default) or no ``backend``: the proxy answers 409
    ``external_search_not_configured`` and the fallback stage skips. ``enabled`` needs a ``backend``.
    """

    version: Literal[1] = 1
    enabled: bool = False
    backend: ExternalBackendConfig | None = None
    fallback: FallbackConfig = Field(default_factory=FallbackConfig)

    @model_validator(mode="before")
    @classmethod
    def _first_shape(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        old = [k for k in ("endpoint", "project", "catalog") if data.get(k) is not None]
        if old:
            raise ValueError(
                f"{', '.join(old)}: name the service in 'backend' "
                "({'type': 'google_retail', 'project': ...} or {'type': 'typesense', 'url': ...})"
            )
        moved = {k: data[k] for k in ("timeout_ms", "min_results") if k in data}
        if not moved:
            return {k: v for k, v in data.items() if k not in ("endpoint", "project", "catalog")}
        rest = {k: v for k, v in data.items() if k not in (*moved, "endpoint", "project", "catalog")}
        fallback = dict(rest.get("fallback") or {})
        for key, value in moved.items():
            fallback.setdefault(key, value)
        return {**rest, "fallback": fallback}

    @model_validator(mode="after")
    def _backend_when_enabled(self) -> CrsConfig:
        if self.enabled and self.backend is None:
            raise ValueError("backend is required when enabled is true")
        return self

    @property
    def active(self) -> bool:
        """Whether the tenant uses an external service at all."""
        return self.enabled and self.backend is not None
