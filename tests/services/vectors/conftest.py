"""The small fashion tenant with vectors (shared with tests/vectors in one session)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.vectors import MiniTenant, mini_fashion


@pytest.fixture(scope="session")
def mini(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> MiniTenant:
    return mini_fashion(tmp_path_factory.getbasetemp() / "vectors-mini", shared_data)
