"""A console behind real services for browser tests: rules (with the console), edit, predict, search.

One bucket holds a copy of the fashion demo tenant, a deployed co-occurrence model and a container
``pdp`` using it; auth is on, tokens come from :class:`tests.support.auth.AuthKit`. The browser is
Debian's ``/usr/bin/chromium`` driven by Playwright (never a downloaded browser); without it the tests
skip with a reason, except with ``CI=true``.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import require
from tests.support.auth import AuthKit, serve
from tests.support.recs import CooccurrenceRecommender, register_and_deploy

from aisle.core.auth.scopes import RECS_READ, SEARCH_READ
from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.recs.containers import ContainerBody, ContainerStore
from aisle.recs.models.base import ModelType
from aisle.recs.serving import RegistryModelSource

CHROMIUM = Path("/usr/bin/chromium")
SEED = "15970"
SHOTS = Path(os.environ.get("AISLE_SCREENSHOTS", Path(tempfile.gettempdir()) / "aisle-console-screenshots"))


@dataclass
class ConsoleEnv:
    """URLs of the running services, tokens, and the bucket."""

    console: str
    search: str
    predict: str
    edit: str
    analytics: str
    kit: AuthKit
    settings: Settings
    full_token: str
    read_only_token: str
    neighbours: list[str]


def fashion_neighbours(shared_data: Path, n: int = 16) -> list[str]:
    """``n`` fashion product ids, two per brand (the co-occurrence model's neighbours of SEED)."""
    per_brand: dict[str, int] = {}
    picked: list[str] = []
    with gzip.open(shared_data / "fashion" / "products.jsonl.gz", "rt") as f:
        for line in f:
            product = json.loads(line)
            brand = product.get("brand") or ""
            if product["id"] == SEED or per_brand.get(brand, 0) >= 2:
                continue
            per_brand[brand] = per_brand.get(brand, 0) + 1
            picked.append(str(product["id"]))
            if len(picked) == n:
                break
    return picked


@pytest.fixture(scope="module")
def console_env(
    demo_env: Any, shared_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ConsoleEnv]:
    from aisle.services.analytics.app import create_app as analytics_app
    from aisle.services.edit.app import create_app as edit_app
    from aisle.services.predict.app import create_app as predict_app
    from aisle.services.rules.app import create_app as rules_app
    from aisle.services.search.app import create_app as search_app

    bucket = tmp_path_factory.mktemp("console") / "bucket"
    shutil.copytree(
        demo_env.store.local_path("fashion"), bucket / "fashion", ignore=shutil.ignore_patterns("rules")
    )
    store = open_blob_store(f"file://{bucket}")
    neighbours = fashion_neighbours(shared_data)
    model = CooccurrenceRecommender([[SEED, pid] for pid in neighbours] + [[SEED, neighbours[0]]] * 3)
    register_and_deploy(store, "fashion", "also-viewed", ModelType.CUSTOMERS_ALSO_VIEW)
    slot = {"slotConfigId": "main", "modelId": "also-viewed", "itemCount": 10}
    ContainerStore(Tenants(store).scope("fashion")).create(
        "pdp", ContainerBody.model_validate({"name": "Product page", "slotConfigurations": [slot]})
    )
    kit = AuthKit(store, auth_url="http://127.0.0.1:9")
    base = {
        "storage_url": f"file://{bucket}",
        "data_dir": demo_env.data_dir,
        "photos_dir": shared_data,
        "container_cache_seconds": 0,
    }
    with (
        serve(
            predict_app(kit.settings(**base), models=RegistryModelSource(lambda scope, record: model))
        ) as predict,
        serve(edit_app(kit.settings(**base), loader=lambda scope, record: model, job_poll_s=0.05)) as edit,
        serve(search_app(kit.settings(**base, predict_url=predict), preload=False)) as search,
        serve(analytics_app(kit.settings(**base))) as analytics,
        serve(
            rules_app(kit.settings(**base, predict_url=predict, edit_url=edit, analytics_url=analytics))
        ) as console,
    ):
        yield ConsoleEnv(
            console=console,
            search=search,
            predict=predict,
            edit=edit,
            analytics=analytics,
            kit=kit,
            settings=kit.settings(**base),
            full_token=kit.token(["fashion"]),
            read_only_token=kit.token(["fashion"], scopes=[SEARCH_READ, RECS_READ], client_id="viewer"),
            neighbours=neighbours,
        )


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    require(CHROMIUM.exists(), f"Debian's chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require(False, "the playwright package is not installed")
        raise
    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
        )
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    yield pg
    context.close()


def shot(page: Any, name: str) -> Path:
    """Save a full-page PNG under SHOTS (``AISLE_SCREENSHOTS`` or the temp dir)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def sign_in(page: Any, env: ConsoleEnv, token: str) -> None:
    page.goto(env.console + "/")
    page.fill("#token", token)
    page.click("button:has-text('Sign in')")
    page.wait_for_url("**/console/fashion/rules")
