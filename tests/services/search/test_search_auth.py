"""The search service with auth on: tokens scope tenants, and /tenants shows only the token's tenants."""

from __future__ import annotations

from fastapi.testclient import TestClient
from tests.support.auth import AuthKit

from aisle.core.storage import open_blob_store
from aisle.services.search.app import create_app


def test_tenants_lists_only_the_tokens_tenants(demo_env) -> None:  # type: ignore[no-untyped-def]
    kit = AuthKit(open_blob_store(demo_env.storage_url))
    settings = kit.settings(storage_url=demo_env.storage_url, data_dir=demo_env.data_dir)
    with TestClient(create_app(settings, preload=False)) as client:
        assert client.get("/tenants").status_code == 401
        only_fashion = {"Authorization": f"Bearer {kit.token(['fashion'])}"}
        assert client.get("/tenants", headers=only_fashion).json() == {"tenants": ["fashion"]}
        both = {"Authorization": f"Bearer {kit.token(['fashion', 'homedepot'])}"}
        assert sorted(client.get("/tenants", headers=both).json()["tenants"]) == ["fashion", "homedepot"]
        refused = client.post("/search", json={"query": "drill", "tenant": "homedepot"}, headers=only_fashion)
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "tenant_forbidden"
        allowed = client.post(
            "/search", json={"query": "shirt", "tenant": "fashion", "size": 1}, headers=only_fashion
        )
        assert allowed.status_code == 200 and allowed.json()["total"] > 0
