"""The external-search contract for the google_retail backend: google-cloud-retail and -vision over REST,
signed in with a service account key, against Google's stand-in holding the contract catalog."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import require
from tests.search.external.conftest import HAS_GOOGLE, png
from tests.search.external.contract import CATALOG, BackendHarness, ExternalSearchContract
from tests.support.sockets import free_port, silent_server

from aisle.core.crs_config import GoogleRetailBackendConfig
from aisle.search.external.errors import ExternalSearchAuthFailed
from aisle.search.external.protocol import ExternalSearchRequest

TOKEN = "ya29.stand-in-token"
EMAIL = "aisle-search@aisle-test.iam.gserviceaccount.com"
RGB = {
    "Blue": (30, 60, 200),
    "Black": (10, 10, 10),
    "White": (245, 245, 245),
    "Yellow": (240, 220, 30),
    "Brown": (120, 70, 30),
    "Grey": (128, 128, 128),
    "Purple": (120, 40, 160),
    "Orange": (250, 130, 20),
}


def _open(config: dict[str, Any], **changes: Any) -> Any:
    from aisle.search.external.external_search_google import GoogleRetailSearch

    return GoogleRetailSearch(GoogleRetailBackendConfig.model_validate({**config, **changes}))


@pytest.fixture
def google(tmp_path: Path) -> Iterator[tuple[Any, dict[str, Any]]]:
    """The stand-in (requiring a bearer token) and a backend config signed in with a trusted key file."""
    require(HAS_GOOGLE, "google-cloud-retail is not installed (pip install '.[google]')")
    from tests.support.google_credentials import service_account_key
    from tests.support.google_retail_search import retail_product
    from tests.support.google_retail_standin import GoogleStandin, backend_config

    standin = GoogleStandin(
        [retail_product(p) for p in CATALOG],
        images={p["id"]: png(RGB.get(p["color"], (200, 30, 30))) for p in CATALOG},
        access_token=TOKEN,
    )
    key, public = service_account_key(EMAIL, f"{standin.url}/token")
    standin.trusted_keys[EMAIL] = public
    (tmp_path / "key.json").write_text(json.dumps(key))
    with standin:
        yield standin, backend_config(standin, credentials={"file": str(tmp_path / "key.json")})


@pytest.fixture
def harness(google: tuple[Any, dict[str, Any]], tmp_path: Path) -> Iterator[BackendHarness]:
    from tests.support.google_credentials import service_account_key

    standin, config = google
    untrusted, _ = service_account_key("someone@else.iam.gserviceaccount.com", f"{standin.url}/token")
    (tmp_path / "untrusted.json").write_text(json.dumps(untrusted))
    backend = _open(config)
    with silent_server() as silent_port:
        yield BackendHarness(
            backend=backend,
            unreachable=lambda: _open(config, endpoint=f"127.0.0.1:{free_port()}"),
            silent=lambda: _open(config, endpoint=f"127.0.0.1:{silent_port}"),
            wrong_credentials=lambda: _open(config, credentials={"file": str(tmp_path / "untrusted.json")}),
            supports_images=True,
            image=png(RGB["Blue"]),
        )
    backend.close()


class TestGoogleRetailContract(ExternalSearchContract):
    pass


def test_a_refused_token_is_renewed_once_then_auth_fails(
    harness: BackendHarness, google: tuple[Any, dict[str, Any]]
) -> None:
    standin, _ = google
    assert harness.backend.search(ExternalSearchRequest(query="headlamp")).products
    standin.access_token = "another-token"  # Google expires the token: the session gets a new one
    assert harness.backend.search(ExternalSearchRequest(query="headlamp")).total == 1
    standin.trusted_keys.clear()  # the key is deleted: no new token, the call fails as auth
    standin.access_token = "a-third-token"
    with pytest.raises(ExternalSearchAuthFailed):
        harness.backend.search(ExternalSearchRequest(query="headlamp"))


def test_key_json_in_an_environment_variable(
    google: tuple[Any, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, config = google
    monkeypatch.setenv("AISLE_TEST_GOOGLE_KEY", Path(config["credentials"]["file"]).read_text())
    backend = _open(config, credentials={"env": "AISLE_TEST_GOOGLE_KEY"})
    assert [p.id for p in backend.search(ExternalSearchRequest(query="headlamp")).products] == ["ext-11"]


def test_key_path_in_an_environment_variable(
    google: tuple[Any, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, config = google
    monkeypatch.setenv("AISLE_TEST_GOOGLE_KEY_PATH", config["credentials"]["file"])
    backend = _open(config, credentials={"env": "AISLE_TEST_GOOGLE_KEY_PATH"})
    assert backend.search(ExternalSearchRequest(query="headlamp")).total == 1


@pytest.mark.parametrize("content", ["", "{not json", '{"type": "service_account"}'])
def test_a_key_file_that_is_no_key_fails_auth_without_echoing_it(
    google: tuple[Any, dict[str, Any]], tmp_path: Path, content: str
) -> None:
    _, config = google
    (tmp_path / "bad.json").write_text(content)
    with pytest.raises(ExternalSearchAuthFailed) as err:
        _open(config, credentials={"file": str(tmp_path / "bad.json")})
    assert err.value.status == 502 and "service_account" not in str(err.value)


def test_no_credentials_against_a_service_that_wants_them(google: tuple[Any, dict[str, Any]]) -> None:
    _, config = google
    backend = _open({k: v for k, v in config.items() if k != "credentials"})  # anonymous over http
    with pytest.raises(ExternalSearchAuthFailed):
        backend.search(ExternalSearchRequest(query="headlamp"))
