"""Each service's OpenAPI document fuzzed by schemathesis against the running service
(:mod:`tests.support.openapi_fuzz`): the search side: search,
rule management, vector search and the catalog-search proxy."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.openapi_fuzz import fuzz_service

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("service", ["search", "rules", "vectors", "proxy"])
def test_openapi_fuzz_finds_no_server_error_and_no_lie(
    service: str, tmp_path: Path, shared_data: Path
) -> None:
    fuzz_service(service, tmp_path, shared_data)
