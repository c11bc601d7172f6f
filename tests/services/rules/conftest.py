"""The rules service over a bucket holding a copy of the fashion demo tenant (its index shared)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from aisle.core.config import Settings
from aisle.services.rules.app import create_app


def copy_tenant(demo_env: Any, bucket: Path, tenant: str = "fashion") -> None:
    """Copy a demo tenant's configuration and catalog (not its rules) into ``bucket``."""
    source = demo_env.store.local_path(tenant)
    shutil.copytree(source, bucket / tenant, ignore=shutil.ignore_patterns("rules"))


@pytest.fixture(scope="module")
def settings(demo_env: Any, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Auth off; a bucket of our own (rules written here never reach other tests); the demo indexes."""
    bucket = tmp_path_factory.mktemp("rules") / "bucket"
    copy_tenant(demo_env, bucket)
    return Settings(
        storage_url=f"file://{bucket}",
        data_dir=demo_env.data_dir,
        auth="off",
        predict_url="http://127.0.0.1:9",
    )


@pytest.fixture(autouse=True)
def no_rules(settings: Settings) -> None:
    """Every test starts with no rules."""
    shutil.rmtree(
        Path(settings.storage_url.removeprefix("file://")) / "fashion" / "rules", ignore_errors=True
    )


@pytest.fixture(scope="module")
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as c:
        yield c
