"""Issue 19's done-when: services answer before the heavy build, and switch features on when it lands.

A small fashion tenant is imported and indexed without vectors (what ``aisle demo --cheap`` leaves),
the search and predict services start on it (in process, real ASGI apps), and the real background
builder (``aisle demo --heavy`` in a child process, as ``aisle serve --build-demo`` starts it) builds its
text vectors and SIMILAR_ITEMS model. While the builder is paused mid-build (SIGSTOP, so the "building"
state cannot race past), search answers lexically and says so, ``/vector-search`` answers 503
``vectors_building`` with a Retry-After and predict 503 ``model_training``; once it has finished, the
same processes answer hybrid, vector and similar-items requests without a restart.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.support.vectors import MiniTenant, mini_fashion

from aisle.core.builds import FileBuildBoard
from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.demo.containers import announce_heavy
from aisle.services.predict.app import create_app as create_predict
from aisle.services.search.app import create_app as create_search
from aisle.services.vectors.app import create_app as create_vectors

SEARCH = {"tenant": "fashion", "query": "blue shirt", "size": 5}
PREDICT = {"containerId": "similar-items"}
SHIRT = {"text": "shirt", "k": 3}


@pytest.fixture
def mini(tmp_path: Path, shared_data: Path) -> MiniTenant:
    tenant = mini_fashion(tmp_path, shared_data, products=200, images=False, text=False)
    announce_heavy(open_blob_store(tenant.storage_url), ["fashion"])  # as `aisle demo --cheap` does
    return tenant


@pytest.fixture
def clients(mini: MiniTenant) -> Iterator[tuple[TestClient, TestClient]]:
    settings = Settings(
        storage_url=mini.storage_url, data_dir=mini.data_dir, auth="off", predict_url="http://127.0.0.1:9"
    )
    with TestClient(create_search(settings)) as search, TestClient(create_predict(settings)) as predict:
        yield search, predict


@pytest.fixture
def vectors(mini: MiniTenant) -> Iterator[TestClient]:
    settings = Settings(storage_url=mini.storage_url, data_dir=mini.data_dir, auth="off")
    with TestClient(create_vectors(settings)) as client:
        yield client


def _builder(mini: MiniTenant, shared_data: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "AISLE_STORAGE_URL": mini.storage_url, "AISLE_DATA_DIR": str(mini.data_dir)}
    cmd = [
        sys.executable,
        "-m",
        "aisle.cli",
        "demo",
        "--heavy",
        "--no-images",
        "--data-dir",
        str(shared_data),
    ]
    with log.open("wb") as out:
        return subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)


def _until(check: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_services_answer_at_once_and_switch_features_on_when_the_build_lands(
    mini: MiniTenant,
    clients: tuple[TestClient, TestClient],
    vectors: TestClient,
    shared_data: Path,
    tmp_path: Path,
) -> None:
    search, predict = clients
    # the suggestion index is built at start-up (in the background), not by a first request
    suggesters = search.app.state.search.engine.suggesters  # type: ignore[attr-defined]
    _until(lambda: suggesters.ready("fashion"), 30, "the start-up suggestion build")
    board = FileBuildBoard(mini.data_dir)
    builder = _builder(mini, shared_data, tmp_path / "builder.log")
    try:
        _until(lambda: board.building("fashion", "text_vectors"), 60, "the builder to announce its builds")
        os.kill(builder.pid, signal.SIGSTOP)  # mid-build: the state below cannot race past
        assert board.building("fashion", "text_vectors") is not None

        # a vector store remembers a missing table for its re-check interval (5 s), so the services may
        # say "unavailable" (what they saw at start-up, before the build was announced) for that long
        lexical = _until(
            lambda: (
                (r := search.post("/search", json=SEARCH)).json()["queryGraph"]["hybrid"] == "building" and r
            ),
            15,
            "search to say hybrid is building",
        )
        assert lexical.status_code == 200 and lexical.json()["products"], lexical.text
        vector = search.post("/vector-search", json=SEARCH)
        assert vector.status_code == 503 and vector.json()["error"]["code"] == "vectors_building"
        assert 5 <= int(vector.headers["retry-after"]) <= 120
        service = _until(
            lambda: (
                (r := vectors.post("/vectors/search", params={"tenant": "fashion"}, json=SHIRT)).json()[
                    "error"
                ]["code"]
                == "vectors_building"
                and r
            ),
            15,
            "the vector service to say vectors are building",
        )
        assert service.status_code == 503
        assert "retry-after" in service.headers
        similar = predict.post(
            "/predict", params={"tenant": "fashion"}, json={**PREDICT, "productIds": [mini.ids[0]]}
        )
        assert similar.status_code == 503 and similar.json()["error"]["code"] == "model_training"
        assert "retry-after" in similar.headers
        health = search.get("/health").json()["builds"]["fashion"]
        assert {b["artifact"]: b["state"] for b in health}["text_vectors"] in ("queued", "running")

        os.kill(builder.pid, signal.SIGCONT)
        builder.wait(timeout=240)
    finally:
        if builder.poll() is None:
            os.kill(builder.pid, signal.SIGCONT)
            builder.kill()
            builder.wait()
    log = (tmp_path / "builder.log").read_text()
    states = {b.artifact: b.state for b in board.all() if b.tenant == "fashion"}
    assert states == {"text_vectors": "done", "similar_items": "done"}, log
    assert board.get("homedepot", "text_vectors").state == "failed"  # type: ignore[union-attr]  # no such tenant here

    # the same processes, no restart: hybrid within the vector store's re-check interval (5 s)
    graph = _until(
        lambda: (g := search.post("/search", json=SEARCH).json()["queryGraph"])["hybrid"] == "used" and g,
        15,
        "hybrid search to switch on",
    )
    assert any(s["stage"].startswith("hybrid") for s in graph["stages_tried"])
    vector = search.post("/vector-search", json=SEARCH)
    assert vector.status_code == 200 and vector.json()["products"], vector.text
    service = _until(
        lambda: (
            (
                r := vectors.post(
                    "/vectors/search", params={"tenant": "fashion"}, json={"text": "shirt", "k": 3}
                )
            ).status_code
            == 200
            and r
        ),
        15,
        "the vector service to serve the new table",
    )
    assert len(service.json()["neighbours"]) == 3
    ask = {**PREDICT, "productIds": [mini.ids[0]]}
    similar = _until(
        lambda: (
            (r := predict.post("/predict", params={"tenant": "fashion"}, json=ask)).status_code == 200 and r
        ),
        15,
        "the similar-items container to answer",
    )
    assert similar.json()["response_data"] and mini.ids[0] not in [
        i["id"] for i in similar.json()["response_data"]
    ]
    health = search.get("/health").json()["builds"]["fashion"]
    assert all(b["state"] == "done" and b["percent"] == 100 for b in health)


def test_a_stopped_builder_leaves_nothing_half_built_and_the_next_one_finishes(
    mini: MiniTenant, shared_data: Path, tmp_path: Path
) -> None:
    board = FileBuildBoard(mini.data_dir)
    builder = _builder(mini, shared_data, tmp_path / "first.log")
    try:
        _until(lambda: board.building("fashion", "text_vectors"), 60, "the builder to announce its builds")
    finally:
        builder.terminate()  # what `aisle serve` does when it stops
        builder.wait(timeout=60)
    assert board.get("fashion", "text_vectors").state == "interrupted"  # type: ignore[union-attr]
    tables = mini.data_dir / "vectors" / "fashion" / "text"
    leftovers = [d.name for d in tables.iterdir() if not (d / "BUILT").exists()] if tables.is_dir() else []
    assert leftovers == []

    second = _builder(mini, shared_data, tmp_path / "second.log")
    second.wait(timeout=240)
    states = {b.artifact: b.state for b in board.all() if b.tenant == "fashion"}
    assert states == {"text_vectors": "done", "similar_items": "done"}, (tmp_path / "second.log").read_text()
