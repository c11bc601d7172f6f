"""Each service's OpenAPI document, fuzzed by schemathesis against the running service.

Every service runs under uvicorn on a throwaway tenant (its own bucket: nothing written here reaches
another test), and the ``st`` command-line runner generates requests from the service's own
``/openapi.json``, bounded by ``MAX_EXAMPLES`` per operation and ``MAX_TIME_S`` per service (settings:
``AISLE_FUZZ_EXAMPLES``, ``AISLE_FUZZ_SECONDS``), with four checks:

* ``not_a_server_error``: no 5xx, whatever the input;
* ``status_code_conformance``: every status answered is documented for the operation;
* ``response_schema_conformance``: every body answered matches its documented schema;
* ``positive_data_acceptance``: a request valid by the schema is not answered 422. A 400 is allowed:
  it is how a schema-valid request that names something the tenant does not have (an event type, an
  attribute, a model) or breaks a documented cross-field rule is refused, with its own code.

The printed summary (operations, cases, failures) is the figure the issue asks for. The services are
fuzzed by two test modules (``tests/services/test_openapi_fuzz_search.py`` and ``..._recs.py``), about
90 s each, so pytest-xdist (a file per worker) runs them side by side.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from tests.support.auth import AuthKit, serve
from tests.support.recs import CooccurrenceRecommender, small_tenant
from tests.support.vectors import mini_fashion

from aisle.core.config import Settings
from aisle.core.storage import open_blob_store

# The budget per service, a setting: AISLE_FUZZ_EXAMPLES cases per operation and phase, AISLE_FUZZ_SECONDS
# in all (the coverage phase alone makes 30,000 cases of predict's recursive conditions). A deeper run:
#   AISLE_FUZZ_EXAMPLES=200 AISLE_FUZZ_SECONDS=600 make test PYTEST_ARGS=-k=openapi_fuzz
MAX_EXAMPLES = int(os.environ.get("AISLE_FUZZ_EXAMPLES", "15"))
MAX_TIME_S = int(os.environ.get("AISLE_FUZZ_SECONDS", "7"))
CHECKS = "not_a_server_error,status_code_conformance,response_schema_conformance,positive_data_acceptance"
ST = Path(sys.executable).parent / "st"


def fashion_copy(shared_data: Path, tmp: Path) -> Settings:
    """A copy of the small fashion tenant with text and photo vectors (built once per session)."""
    mini = mini_fashion(tmp.parent.parent / "vectors-mini", shared_data)
    shutil.copytree(Path(mini.storage_url.removeprefix("file://")), tmp / "bucket")
    shutil.copytree(mini.data_dir, tmp / "data")
    return Settings(storage_url=f"file://{tmp / 'bucket'}", data_dir=tmp / "data", auth="off")


@contextmanager
def edit_app(tmp: Path, shared_data: Path) -> Iterator[Any]:
    from aisle.services.edit.app import create_app

    yield create_app(small_tenant(tmp), loader=lambda scope, record: CooccurrenceRecommender([["p0", "p1"]]))


@contextmanager
def predict_app(tmp: Path, shared_data: Path) -> Iterator[Any]:
    yield _predict(small_tenant(tmp))


def _predict(settings: Settings) -> Any:
    from aisle.recs.serving import RegistryModelSource
    from aisle.services.predict.app import create_app

    model = CooccurrenceRecommender([["p0", "p1"], ["p0", "p2"], ["p1", "p3"]])
    return create_app(settings, models=RegistryModelSource(lambda scope, record: model))


@contextmanager
def search_app(tmp: Path, shared_data: Path) -> Iterator[Any]:
    """The search service, its POST /recommendations forwarded to a predict service on the same bucket and
    its POST /shop/events to an edit service."""
    from aisle.services.edit.app import create_app as create_edit
    from aisle.services.search.app import create_app

    settings = fashion_copy(shared_data, tmp)
    with serve(_predict(settings)) as predict_url, serve(create_edit(settings)) as edit_url:
        yield create_app(settings.model_copy(update={"predict_url": predict_url, "edit_url": edit_url}))


@contextmanager
def rules_app(tmp: Path, shared_data: Path) -> Iterator[Any]:
    from aisle.services.rules.app import create_app

    yield create_app(fashion_copy(shared_data, tmp))


@contextmanager
def vectors_app(tmp: Path, shared_data: Path) -> Iterator[Any]:
    from aisle.services.vectors.app import create_app

    yield create_app(fashion_copy(shared_data, tmp))


@contextmanager
def auth_app(tmp: Path, shared_data: Path) -> Iterator[Any]:
    from aisle.services.auth.app import create_app

    kit = AuthKit(open_blob_store(f"file://{tmp / 'bucket'}"))
    yield create_app(kit.settings(), store=kit.store)


@contextmanager
def proxy_app(tmp: Path, shared_data: Path) -> Iterator[Any]:
    """The proxy service on tenant ``outdoor``, falling back to a real Typesense server of its own."""
    from tests.support.external import (
        KEY_ENV,
        crs_config,
        load_external,
        require_typesense,
        write_outdoor_tenant,
    )

    from aisle.demo.typesense_server import TypesenseServer
    from aisle.services.proxy.app import create_app

    require_typesense()
    settings = Settings(auth="off", storage_url=f"file://{tmp / 'bucket'}", data_dir=tmp / "data")
    with TypesenseServer(tmp / "typesense", api_key="fuzz-key") as server, pytest.MonkeyPatch.context() as mp:
        mp.setenv(KEY_ENV, server.api_key)
        load_external(server.url, server.api_key)
        write_outdoor_tenant(open_blob_store(settings.storage_url), "outdoor", crs_config(server.url))
        yield create_app(settings)


@contextmanager
def analytics_app(tmp: Path, shared_data: Path) -> Iterator[Any]:
    from aisle.services.analytics.app import create_app

    yield create_app(small_tenant(tmp))


APPS: dict[str, tuple[str, Callable[[Path, Path], AbstractContextManager[Any]]]] = {
    "edit": ("shop", edit_app),
    "predict": ("shop", predict_app),
    "search": ("fashion", search_app),
    "rules": ("fashion", rules_app),
    "vectors": ("fashion", vectors_app),
    "auth": ("shop", auth_app),
    "proxy": ("outdoor", proxy_app),
    "analytics": ("shop", analytics_app),
}


def config_file(tmp: Path, tenant: str) -> Path:
    path = tmp / "schemathesis.toml"
    path.write_text(
        f'[parameters]\n"query.tenant" = "{tenant}"\n"body.tenant" = "{tenant}"\n\n'
        "[checks.positive_data_acceptance]\n"
        'expected-statuses = ["2XX", "3XX", 400, 401, 403, 404, 409, 429]\n'
    )
    return path


def fuzz(base_url: str, tmp: Path, tenant: str) -> tuple[int, str]:
    """Run schemathesis over ``base_url``'s OpenAPI; returns (exit code, output)."""
    command = [
        str(ST),
        "--config-file",
        str(config_file(tmp, tenant)),
        "--no-color",
        "run",
        f"{base_url}/openapi.json",
        "--checks",
        CHECKS,
        "--max-examples",
        str(MAX_EXAMPLES),
        "--seed",
        "16",
        "--phases",
        "examples,coverage,fuzzing",
        "--request-timeout",
        "20",
        "--workers",
        "1",
        "--max-time",
        str(MAX_TIME_S),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp)
    return done.returncode, done.stdout + done.stderr


def fuzz_service(service: str, tmp_path: Path, shared_data: Path) -> None:
    """Fuzz ``service`` (a key of :data:`APPS`) on a throwaway tenant; fails with schemathesis's output."""
    tenant, app_for = APPS[service]
    with app_for(tmp_path, shared_data) as app, serve(app) as url:
        code, output = fuzz(url, tmp_path, tenant)
    summary = re.findall(r"(?:Selected|Tested): \d+/?\d*|\d+ generated.*|❌ .*", output)
    print(f"\nschemathesis {service}: " + "; ".join(s.strip() for s in summary))
    assert code == 0, output[-6000:]
