"""Fixtures of the token service tests: an AuthKit over a temp store and the service app on a TestClient."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from tests.support.auth import AuthKit

from aisle.core.storage import BlobStore
from aisle.services.auth.app import create_app


@pytest.fixture
def kit(blob_store: BlobStore) -> AuthKit:
    return AuthKit(blob_store, auth_url="http://testserver")


@pytest.fixture
def token_client(kit: AuthKit) -> Iterator[TestClient]:
    """The token service (lifespan run) answering at http://testserver."""
    with TestClient(create_app(kit.settings(), store=kit.store)) as client:
        yield client
