"""The real network path: the token service on uvicorn, a service's Authorizer fetching the JWKS over HTTP,
and the ``aisle auth`` commands an operator runs. (No ``from __future__ import annotations``: FastAPI must
resolve the annotations of routes built inside functions.)"""

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import httpx
import pytest
from fastapi import Depends, FastAPI
from fastapi.testclient import TestClient
from tests.support.auth import AuthKit, free_port, serve
from typer.testing import CliRunner

from aisle.cli.auth import auth_app
from aisle.core.auth.dependencies import Authorizer, Principal
from aisle.core.auth.scopes import SCOPES
from aisle.core.storage import BlobStore
from aisle.services.auth.app import create_app
from aisle.services.common.errors import install_error_handlers


@pytest.fixture
def live(blob_store: BlobStore, tmp_path: Path) -> Iterator[tuple[AuthKit, str]]:
    """The token service on a loopback port; yields the kit (same storage) and its URL."""
    port = free_port()
    kit = AuthKit(blob_store, auth_url=f"http://127.0.0.1:{port}")
    with serve(create_app(kit.settings(), store=blob_store), port=port) as url:
        yield kit, url


def protected_app(authorizer: Authorizer) -> FastAPI:
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/items")
    def items(
        tenant: str, principal: Annotated[Principal | None, Depends(authorizer.require("search:read"))]
    ) -> Any:
        return {"client": principal.client_id if principal else None}

    return app


def test_service_validates_tokens_against_jwks_over_http(live: tuple[AuthKit, str]) -> None:
    kit, url = live
    key = kit.add_client("shop", ["fashion"], ["search:read"])
    form = {
        "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
        "assertion": kit.assertion("shop", key),
    }
    token = httpx.post(f"{url}/token", data=form).json()["access_token"]
    authorizer = Authorizer(kit.settings())  # no store: JWKS from {auth_url}/.well-known/jwks.json
    with TestClient(protected_app(authorizer)) as client:
        ok = client.get("/items?tenant=fashion", headers={"Authorization": f"Bearer {token}"})
        assert ok.status_code == 200 and ok.json() == {"client": "shop"}
        other = client.get("/items?tenant=homedepot", headers={"Authorization": f"Bearer {token}"})
        assert other.status_code == 403


def test_unreachable_token_service_is_503_not_500(blob_store: BlobStore) -> None:
    kit = AuthKit(blob_store, auth_url=f"http://127.0.0.1:{free_port()}")  # nothing listens there
    with TestClient(protected_app(Authorizer(kit.settings()))) as client:
        r = client.get("/items?tenant=fashion", headers={"Authorization": f"Bearer {kit.token(['fashion'])}"})
        assert r.status_code == 503 and r.json()["error"]["code"] == "auth_unavailable"


def test_cli_add_client_token_list_rotate(
    live: tuple[AuthKit, str], tmp_path: Path, blob_store: BlobStore
) -> None:
    kit, url = live
    runner = CliRunner()
    env = {"AISLE_STORAGE_URL": f"file://{blob_store.local_path('')}", "AISLE_AUTH_URL": url}
    added = runner.invoke(
        auth_app,
        [
            "add-client",
            "--tenants",
            "fashion,homedepot",
            "--scopes",
            "search:read,recs:read",
            "--client-id",
            "shop",
        ],
        env=env,
    )
    assert added.exit_code == 0, added.output
    assert "-----BEGIN PRIVATE KEY-----" in added.stdout
    key_file = tmp_path / "shop.pem"
    key_file.write_text(added.stdout[added.stdout.index("-----BEGIN") :])
    unknown_scope = ["add-client", "--tenants", "x", "--scopes", "superuser"]
    assert runner.invoke(auth_app, unknown_scope, env=env).exit_code == 2
    again = ["add-client", "--tenants", "fashion", "--scopes", "search:read", "--client-id", "shop"]
    assert runner.invoke(auth_app, again, env=env).exit_code == 2  # exists; no silent overwrite

    listed = runner.invoke(auth_app, ["list-clients"], env=env)
    assert listed.exit_code == 0 and listed.stdout.startswith(
        "shop\tfashion,homedepot\tsearch:read,recs:read\tES256"
    )

    got = runner.invoke(auth_app, ["token", "--client-id", "shop", "--key-file", str(key_file)], env=env)
    assert got.exit_code == 0, got.output
    token = got.stdout.strip()
    with TestClient(protected_app(Authorizer(kit.settings(), blob_store))) as client:
        assert (
            client.get("/items?tenant=homedepot", headers={"Authorization": f"Bearer {token}"}).status_code
            == 200
        )

    rotated = runner.invoke(auth_app, ["rotate-keys"], env=env)
    assert rotated.exit_code == 0 and "published:" in rotated.stdout
    assert len(kit.keys.published()) == 2

    wrong = runner.invoke(auth_app, ["token", "--client-id", "other", "--key-file", str(key_file)], env=env)
    assert wrong.exit_code == 2 and "invalid_grant: assertion refused" in wrong.output
    assert runner.invoke(auth_app, ["remove-client", "shop"], env=env).exit_code == 0
    assert runner.invoke(auth_app, ["list-clients"], env=env).stdout == ""


def test_cli_demo_client_is_idempotent(blob_store: BlobStore, tmp_path: Path) -> None:
    runner = CliRunner()
    env = {
        "AISLE_STORAGE_URL": f"file://{blob_store.local_path('')}",
        "AISLE_AUTH_URL": "http://127.0.0.1:8086",
    }
    key_file = tmp_path / "var" / "auth" / "demo.pem"
    first = runner.invoke(auth_app, ["demo-client", "--key-file", str(key_file)], env=env)
    assert first.exit_code == 0, first.output
    assert "export AISLE_TOKEN=" in first.stdout and "curl -s" in first.stdout
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    pem = key_file.read_bytes()
    second = runner.invoke(auth_app, ["demo-client", "--key-file", str(key_file)], env=env)
    assert second.exit_code == 0 and key_file.read_bytes() == pem  # same key, same client
    kit = AuthKit(blob_store, auth_url="http://127.0.0.1:8086")
    record = kit.clients.get("demo")
    assert (
        record is not None
        and record.tenants == ["fashion", "homedepot"]
        and len(record.scopes) == len(SCOPES)
    )
    token = second.stdout.split("export AISLE_TOKEN=")[1].split()[0]
    with TestClient(protected_app(Authorizer(kit.settings(), blob_store))) as client:
        assert (
            client.get("/items?tenant=fashion", headers={"Authorization": f"Bearer {token}"}).status_code
            == 200
        )
