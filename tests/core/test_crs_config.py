"""crs_config.json: backend choice, secret references, the fallback settings and the first shape."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from aisle.core.crs_config import CrsConfig, TypesenseBackendConfig

TYPESENSE = {
    "type": "typesense",
    "url": "http://127.0.0.1:8108",
    "collection": "products",
    "api_key": {"env": "AISLE_TYPESENSE_API_KEY"},
    "query_by": ["title", "brand"],
}


def test_default_is_off() -> None:
    crs = CrsConfig()
    assert not crs.active
    assert crs.fallback.when == ["no_results"]


def test_typesense_backend_is_chosen_by_type() -> None:
    crs = CrsConfig.model_validate({"enabled": True, "backend": TYPESENSE, "fallback": {"merge": "replace"}})
    assert isinstance(crs.backend, TypesenseBackendConfig)
    assert crs.active and crs.fallback.merge == "replace"


def test_enabled_needs_a_backend() -> None:
    with pytest.raises(ValidationError, match="backend is required"):
        CrsConfig.model_validate({"enabled": True})


@pytest.mark.parametrize(
    "api_key",
    [{"env": "A", "file": "/x"}, {}, "plain-secret", {"value": "plain-secret"}],
)
def test_secrets_are_references_only(api_key: object) -> None:
    with pytest.raises(ValidationError):
        CrsConfig.model_validate({"enabled": True, "backend": {**TYPESENSE, "api_key": api_key}})


def test_first_shape_still_loads() -> None:
    crs = CrsConfig.model_validate({"version": 1, "enabled": False, "timeout_ms": 500, "min_results": 2})
    assert crs.fallback.timeout_ms == 500
    assert crs.fallback.min_results == 2


def test_first_shape_endpoint_is_named() -> None:
    with pytest.raises(ValidationError, match="endpoint"):
        CrsConfig.model_validate({"enabled": True, "endpoint": "https://retail.googleapis.com"})


def test_round_trip_through_json() -> None:
    crs = CrsConfig.model_validate({"enabled": True, "backend": TYPESENSE})
    raw = crs.model_dump_json(exclude_none=True, by_alias=True)
    assert CrsConfig.model_validate_json(raw) == crs
