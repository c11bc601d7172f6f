"""Process settings: one object, values that follow from others derived in it (aisle.core.config)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from tests.support.auth import AuthKit, free_port, serve

from aisle.core.auth.assertion import JWT_BEARER
from aisle.core.config import DERIVED_URLS, Settings, load_settings
from aisle.core.storage import open_blob_store


@pytest.fixture(autouse=True)
def no_aisle_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Start from the defaults, whatever the machine running the tests exports."""
    for name in ("HOST", *(f for pair in DERIVED_URLS for f in pair)):
        monkeypatch.delenv(f"AISLE_{name.upper()}", raising=False)


def test_the_defaults_are_the_documented_ports() -> None:
    settings = Settings()
    assert (settings.auth_url, settings.predict_url, settings.edit_url) == (
        "http://127.0.0.1:8086",
        "http://127.0.0.1:8081",
        "http://127.0.0.1:8084",
    )
    assert settings.vector_url is None  # in-process neighbours, not derived from vector_port


@pytest.mark.parametrize(("url_field", "port_field"), DERIVED_URLS)
def test_moving_a_service_by_its_port_alone_moves_its_url(
    monkeypatch: pytest.MonkeyPatch, url_field: str, port_field: str
) -> None:
    monkeypatch.setenv(f"AISLE_{port_field.upper()}", "18086")
    assert getattr(load_settings(), url_field) == "http://127.0.0.1:18086"
    monkeypatch.setenv("AISLE_HOST", "10.0.0.5")
    assert getattr(load_settings(), url_field) == "http://10.0.0.5:18086"


@pytest.mark.parametrize(("url_field", "port_field"), DERIVED_URLS)
def test_an_explicit_url_wins_over_the_port(
    monkeypatch: pytest.MonkeyPatch, url_field: str, port_field: str
) -> None:
    monkeypatch.setenv(f"AISLE_{port_field.upper()}", "18086")
    monkeypatch.setenv(f"AISLE_{url_field.upper()}", "https://lb.example.com")
    assert getattr(load_settings(), url_field) == "https://lb.example.com"
    assert getattr(Settings(**{url_field: "http://other:1"}), url_field) == "http://other:1"


@pytest.mark.parametrize(
    ("host", "url"),
    [("0.0.0.0", "http://127.0.0.1:8086"), ("::", "http://127.0.0.1:8086"), ("::1", "http://[::1]:8086")],
)
def test_a_wildcard_or_ipv6_bind_host_gives_a_url_a_client_can_reach(host: str, url: str) -> None:
    assert Settings(host=host).auth_url == url


def test_tokens_of_a_token_service_moved_by_its_port_alone_are_accepted(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``AISLE_AUTH_PORT`` only, as a newcomer moves the token service: a client that knows where it
    listens gets a token there, and a service started with the same environment accepts it."""
    from aisle.services.auth.app import create_app as token_service
    from aisle.services.rules.app import create_app as rules_service

    port = free_port()
    bucket = tmp_path / "bucket"
    monkeypatch.setenv("AISLE_AUTH_PORT", str(port))
    monkeypatch.setenv("AISLE_AUTH", "on")
    monkeypatch.setenv("AISLE_STORAGE_URL", f"file://{bucket}")
    monkeypatch.setenv("AISLE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("AISLE_REDIS_URL", raising=False)
    kit = AuthKit(open_blob_store(f"file://{bucket}"), auth_url=f"http://127.0.0.1:{port}")
    key = kit.add_client("newcomer", ["fashion"])
    with serve(token_service(load_settings()), port=port) as url:
        answer = httpx.post(
            f"{url}/token",
            data={"grant_type": JWT_BEARER, "assertion": kit.assertion("newcomer", key)},
            timeout=10,
        )
        assert answer.status_code == 200, answer.text
        token = answer.json()["access_token"]
        with TestClient(rules_service(load_settings())) as rules:
            listed = rules.get(
                "/rules", params={"tenant": "fashion"}, headers={"Authorization": f"Bearer {token}"}
            )
    assert listed.status_code not in (401, 403), listed.text


def test_the_search_deadline_is_a_setting_the_engine_runs_with(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from pydantic import ValidationError

    from aisle.search.engine import SearchEngine

    assert Settings().search_budget_ms == 250.0
    monkeypatch.setenv("AISLE_SEARCH_BUDGET_MS", "1500")
    settings = Settings(storage_url=f"file://{tmp_path / 'bucket'}", data_dir=tmp_path / "data")
    engine = SearchEngine.from_settings(settings, open_blob_store(settings.storage_url))
    assert engine.pipeline.budget_s == 1.5
    for bad in ("0", "-5", "90000", "soon"):
        monkeypatch.setenv("AISLE_SEARCH_BUDGET_MS", bad)
        with pytest.raises(ValidationError):
            Settings()
