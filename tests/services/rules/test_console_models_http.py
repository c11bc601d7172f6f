"""The Models & jobs page over HTTP (no browser) against a real edit service on a tiny tenant: buttons that
match each model's state (Deploy disabled on the version deployed, Undeploy on a model a container uses
or that is not deployed), a deploy job followed in the model's row until the row shows the new state,
and the tenant's background builds with their progress (the build board, as ``GET /health`` has it)."""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from fastapi.testclient import TestClient
from tests.support.auth import serve
from tests.support.recs import CooccurrenceRecommender, register_and_deploy, write_shop

from aisle.core.builds import Build, FileBuildBoard
from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.recs.models.base import ModelType
from aisle.services.rules.console.model_pages import actions

SHOP = "shop"
PRODUCTS = pl.DataFrame({"id": [f"p{i}" for i in range(6)], "title": [f"Product {i}" for i in range(6)]})


@pytest.fixture
def console(tmp_path: Path) -> Iterator[TestClient]:
    from aisle.services.edit.app import create_app as edit_app
    from aisle.services.rules.app import create_app as rules_app

    store = open_blob_store(f"file://{tmp_path / 'bucket'}")
    write_shop(store, SHOP, PRODUCTS, ["view"])  # m1 deployed, used by container c1
    register_and_deploy(store, SHOP, "m2", ModelType.SIMILAR_ITEMS, deploy=False)
    settings = Settings(storage_url=f"file://{tmp_path / 'bucket'}", data_dir=tmp_path / "data", auth="off")
    now = time.time()
    board = FileBuildBoard(tmp_path / "data")
    board.write(
        Build(SHOP, "similar_items", "running", 30, 120, "embedding 30/120", now - 60, now, os.getpid())
    )
    board.write(Build(SHOP, "text_vectors", "done", 120, 120, "ready", now - 600, now - 300, os.getpid()))
    model = CooccurrenceRecommender([["p0", "p1"], ["p1", "p2"]])
    gate = threading.Event()  # a test clears it to hold a deploy in progress
    gate.set()

    def loader(scope: Any, record: Any) -> CooccurrenceRecommender:
        gate.wait(30)
        return model

    edit = edit_app(settings, loader=loader, job_poll_s=0.05)
    with (
        serve(edit) as edit_url,
        TestClient(rules_app(settings.model_copy(update={"edit_url": edit_url}))) as c,
    ):
        nonce = re.search(r'name="nonce" value="([0-9a-f]+)"', c.get("/console/login").text)
        assert nonce
        c.post("/console/login", data={"nonce": nonce.group(1)}, follow_redirects=False)
        csrf = re.search(r'"X-CSRF-Token": "([0-9a-f]+)"', c.get(f"/console/{SHOP}/models").text)
        assert csrf
        c.headers["X-CSRF-Token"] = csrf.group(1)  # as htmx sends it
        c.gate, c.edit_url = gate, edit_url  # type: ignore[attr-defined]
        yield c


def button(html: str, testid: str) -> tuple[bool, str]:
    """(enabled, label) of the button marked ``testid``."""
    m = re.search(rf'<button[^>]*data-testid="{testid}"([^>]*)>([^<]*)</button>', html)
    assert m, f"no {testid}"
    return "disabled" not in m.group(1), m.group(2)


def build(html: str, artifact: str) -> str:
    """The text of one build's line on the builds card."""
    part = html.split(f'data-artifact="{artifact}"')[1].split('class="build"')[0].split("</table>")[0]
    return " ".join(re.sub(r"<[^>]+>", " ", part.split(">", 1)[1]).split())


def test_buttons_match_each_models_state_and_builds_show_their_progress(console: TestClient) -> None:
    page = console.get(f"/console/{SHOP}/models").text
    assert button(page, "deploy-m1") == (False, "Deploy")  # v1 is the version deployed
    assert button(page, "undeploy-m1") == (False, "Undeploy")  # container c1 serves it
    assert "This version (v1) is deployed; used by c1: take it out of them first." in page
    assert button(page, "deploy-m2") == (True, "Deploy") and button(page, "undeploy-m2")[0] is False
    assert re.search(r'data-testid="builds" hx-get="/console/shop/builds" hx-trigger="every 2s"', page)
    running = build(page, "similar_items")  # a build runs: the card polls
    assert "running 25%" in running and "about 3 min left" in running and "embedding 30/120" in running
    assert "done 100%" in build(page, "text_vectors")
    assert "new build running · 25%" in page  # the SIMILAR_ITEMS model's row names its build


def test_a_deploy_is_followed_in_its_row_until_the_row_shows_the_new_state(console: TestClient) -> None:
    row = console.post(f"/console/{SHOP}/models/m2/deploy").text
    job = re.search(r'hx-get="(/console/shop/models/m2/row\?job=[^"]+)"', row)
    assert job and button(row, "deploy-m2")[0] is False  # while the job runs: nothing to press
    deadline = time.monotonic() + 20
    while 'data-status="completed"' not in row:
        assert time.monotonic() < deadline, row
        time.sleep(0.1)
        row = console.get(job.group(1)).text
    assert "deployed v1" in row and "100%" in row and 'hx-get="/console/shop/models/m2/row' not in row
    assert button(row, "deploy-m2") == (False, "Deploy") and button(row, "undeploy-m2") == (True, "Undeploy")


def test_a_deploy_another_client_started_shows_on_its_row(console: TestClient) -> None:
    import httpx

    console.gate.clear()  # type: ignore[attr-defined]  # the deploy stays in progress
    try:
        started = httpx.post(f"{console.edit_url}/models/m2/deploy", params={"tenant": SHOP})  # type: ignore[attr-defined]
        assert started.status_code == 202
        page = console.get(f"/console/{SHOP}/models").text
        job = started.json()["jobId"]
        assert f'hx-get="/console/shop/models/m2/row?job={job}"' in page  # the row follows it
        assert button(page, "deploy-m2")[0] is False
    finally:
        console.gate.set()  # type: ignore[attr-defined]


def test_a_newer_version_can_be_deployed_over_the_one_serving() -> None:
    model: dict[str, Any] = {"version": 2, "deployment": {"status": "deployed", "modelVersion": 1}}
    assert actions(model, None, [])["deploy"] == {"enabled": True, "label": "Deploy v2", "why": ""}
    training = {"version": 1, "deployment": {"status": "training", "modelVersion": 0}}
    assert actions(training, None, [])["deploy"]["why"] == "being built: the build deploys it"
    busy = actions(model, {"status": "in_progress", "kind": "deploy"}, [])
    assert not busy["deploy"]["enabled"] and busy["undeploy"]["why"] == "a deploy job is running"
