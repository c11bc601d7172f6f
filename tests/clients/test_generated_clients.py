"""Clients generated from the services' OpenAPI, as ``make clients`` makes them: every service's document
generates with openapi-python-client without a warning, the Python clients call running services with
typed answers (search products with id, title, price, score; edit containers), and openapi-typescript
types the same shapes."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from shutil import ignore_patterns
from typing import Any

import orjson
import polars as pl
import pytest
from tests.conftest import require
from tests.support.auth import AuthKit, serve
from tests.support.recs import CooccurrenceRecommender, write_shop

from aisle.cli.openapi import service_documents
from aisle.core.auth.scopes import RECS_READ, RECS_WRITE, SEARCH_READ
from aisle.core.storage import open_blob_store

pytestmark = pytest.mark.slow  # runs openapi-python-client, openapi-typescript and tsc

ADAPTER = Path(__file__).resolve().parents[2] / "clients" / "instantsearch"
CONFIG = ADAPTER.parent / "openapi-python-client.yaml"
PACKAGES = {"search": "aisle_search_service_client", "edit": "aisle_recommendation_edit_service_client"}


def _generator() -> str:
    found = shutil.which("openapi-python-client") or str(
        Path(sys.executable).with_name("openapi-python-client")
    )
    require(Path(found).exists(), "openapi-python-client is not installed (the dev extra)")
    return found


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """Every service's document in ``specs/``, its Python client in ``python/<service>``; the generator's
    output per service."""
    root = tmp_path_factory.mktemp("clients")
    generator = _generator()
    config = root / "config.yaml"
    # make clients' configuration, without the ruff pass over the code: what it generates is the same
    config.write_text(CONFIG.read_text() + "post_hooks: []\n")
    logs: dict[str, str] = {}
    out = root / "python"
    for name, document in service_documents().items():
        spec = root / "specs" / f"{name}.json"
        spec.parent.mkdir(exist_ok=True)
        spec.write_bytes(orjson.dumps(document))
        run = subprocess.run(
            [
                generator,
                "generate",
                "--path",
                str(spec),
                "--output-path",
                str(out / name),
                "--config",
                str(config),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        logs[name] = run.stdout + run.stderr
        assert run.returncode == 0, logs[name]
    for name in PACKAGES:
        sys.path.insert(0, str(root / "python" / name))
    yield root, logs
    for name in PACKAGES:
        sys.path.remove(str(root / "python" / name))


def test_every_service_generates_without_a_warning(generated: tuple[Path, dict[str, str]]) -> None:
    _, logs = generated
    assert sorted(logs) == sorted(
        ["search", "proxy", "predict", "edit", "rules", "vectors", "auth", "analytics"]
    )
    for name, log in logs.items():
        assert "WARNING" not in log and "Unable to parse" not in log, f"{name}:\n{log}"


def _module(name: str, path: str) -> Any:
    return importlib.import_module(f"{PACKAGES[name]}.{path}")


def test_search_through_the_python_client(generated: Any, demo_env: Any, tmp_path: Path) -> None:
    from aisle.services.search.app import create_app

    bucket = tmp_path / "bucket"
    shutil.copytree(demo_env.store.local_path("fashion"), bucket / "fashion", ignore=ignore_patterns("rules"))
    kit = AuthKit(open_blob_store(f"file://{bucket}"))
    settings = kit.settings(storage_url=f"file://{bucket}", data_dir=tmp_path / "data")
    client_mod = _module("search", "client")
    models = _module("search", "models")
    search = _module("search", "api.default.search_search_post")
    with serve(create_app(settings, preload=False)) as url:
        client = client_mod.AuthenticatedClient(base_url=url, token=kit.token(["fashion"], [SEARCH_READ]))
        body = models.SearchRequest(query="black shoes", tenant="fashion", size=3, facets=["brand"])
        answer = search.sync(client=client, body=body)
        assert isinstance(answer, models.SearchResult), answer
        assert answer.total > 0 and len(answer.products) == 3
        first = answer.products[0]
        assert isinstance(first, models.SearchResultProduct)
        assert isinstance(first.id, str) and "shoe" in first.title.lower()
        assert isinstance(first.price, float) and isinstance(first.score, float)
        assert first.additional_properties["category"].startswith("Footwear")
        assert answer.attribution_token
        refused = search.sync_detailed(client=client, body=models.SearchRequest(query="x", tenant="nope"))
        assert refused.status_code == 403 and isinstance(refused.parsed, models.ErrorEnvelope)


def test_containers_through_the_python_client(generated: Any, tmp_path: Path) -> None:
    from aisle.services.edit.app import create_app

    url = f"file://{tmp_path / 'bucket'}"
    store = open_blob_store(url)
    products = pl.DataFrame({"id": ["p0", "p1", "p2"], "title": ["a", "b", "c"]})
    write_shop(store, "shop", products, ["view"])
    kit = AuthKit(store)
    model = CooccurrenceRecommender([["p0", "p1"]])
    app = create_app(kit.settings(storage_url=url, data_dir=tmp_path / "data"), loader=lambda s, r: model)
    client_mod = _module("edit", "client")
    models = _module("edit", "models")
    create = _module("edit", "api.default.create_container_containers_post")
    get = _module("edit", "api.default.get_container_containers_container_id_get")
    with serve(app) as base:
        client = client_mod.AuthenticatedClient(
            base_url=base, token=kit.token(["shop"], [RECS_READ, RECS_WRITE])
        )
        rule = {
            "type": "FILTER",
            "condition": {
                "op": "and",
                "conditions": [
                    {"op": "exists", "field": "title"},
                    {"op": "not", "condition": {"op": "eq", "field": "id", "value": "p2"}},
                ],
            },
        }
        body = models.ContainerCreate.from_dict(
            {
                "containerId": "pdp",
                "name": "Product page",
                "slotConfigurations": [{"slotConfigId": "main", "modelId": "m1", "itemCount": 4}],
                "recommendationRules": [rule],
            }
        )
        created = create.sync(client=client, body=body, tenant="shop")
        assert isinstance(created, models.Container), created
        read = get.sync(client=client, container_id="pdp", tenant="shop")
        assert isinstance(read, models.Container) and read.version == created.version == 1
        condition = read.recommendation_rules[0].condition
        assert isinstance(condition, models.AndCondition)  # one model, not -Input and -Output


def test_typescript_types(tmp_path: Path) -> None:
    tool = ADAPTER / "node_modules" / ".bin" / "openapi-typescript"
    require(
        shutil.which("node") is not None and tool.exists(), "openapi-typescript not installed (make install)"
    )
    docs = service_documents(["search", "edit"])
    out = {}
    for name, document in docs.items():
        spec = tmp_path / f"{name}.json"
        spec.write_bytes(orjson.dumps(document))
        run = subprocess.run(
            [str(tool), str(spec), "-o", str(tmp_path / f"{name}.d.ts")],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert run.returncode == 0, run.stderr
        assert "warn" not in (run.stdout + run.stderr).lower(), run.stdout + run.stderr
        out[name] = (tmp_path / f"{name}.d.ts").read_text()
    products = out["search"].split("SearchResult: {", 1)[1].split("products:", 1)[1][:1500]
    for field in (
        "id: string;",
        "title?: string | null;",
        "price?: number | null;",
        "score?: number | null;",
    ):
        assert field in products, products
    assert "AndCondition: {" in out["edit"] and "AndCondition-Output" not in out["edit"]


def test_the_adapter_type_checks_against_the_services_types(tmp_path: Path) -> None:
    """``npm run types`` (``scripts/types.mjs``): every service's TypeScript types from its document, then
    ``tsc --checkJs`` over the adapter's sources, which import the search service's answer types."""
    node = shutil.which("node")
    require(
        node is not None and (ADAPTER / "node_modules" / "typescript").exists(),
        "the adapter's npm packages are not installed (make install)",
    )
    assert node is not None
    for name, document in service_documents().items():
        (tmp_path / f"{name}.json").write_bytes(orjson.dumps(document))
    run = subprocess.run(
        [node, "scripts/types.mjs", str(tmp_path)],
        cwd=ADAPTER,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "the adapter type-checks" in run.stdout
    assert (ADAPTER / "types" / "search.d.ts").exists()
