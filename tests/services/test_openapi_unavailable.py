"""Every operation that may need object storage or Redis documents its 503 and the Retry-After header.

Built from each service's own ``/openapi.json`` (no request is made), so a route added without the
outage status fails here; the outages themselves are ``test_storage_outage.py`` and
``edit/test_redis_outage.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aisle.core.config import Settings


def factories() -> dict[str, Callable[[Settings], Any]]:
    from aisle.services.analytics.app import create_app as analytics
    from aisle.services.auth.app import create_app as auth
    from aisle.services.edit.app import create_app as edit
    from aisle.services.predict.app import create_app as predict
    from aisle.services.rules.app import create_app as rules
    from aisle.services.search.app import create_app as search
    from aisle.services.vectors.app import create_app as vectors

    return {
        "analytics": analytics,
        "auth": auth,
        "edit": edit,
        "predict": predict,
        "rules": rules,
        "search": lambda s: search(s, preload=False),
        "vectors": vectors,
    }


@pytest.mark.parametrize("service", ["analytics", "auth", "edit", "predict", "rules", "search", "vectors"])
def test_every_operation_but_health_documents_503_with_retry_after(service: str, tmp_path: Path) -> None:
    settings = Settings(auth="off", storage_url=f"file://{tmp_path / 'bucket'}", data_dir=tmp_path / "data")
    document = factories()[service](settings).openapi()
    checked = 0
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            unavailable = operation["responses"].get("503")
            if path == "/health":
                assert unavailable is None, f"{method} {path}: nothing there can be unavailable"
                continue
            assert unavailable is not None, f"{service}: {method.upper()} {path} does not document 503"
            assert "Retry-After" in unavailable.get("headers", {}), f"{method.upper()} {path}: no Retry-After"
            checked += 1
    assert checked > 0
