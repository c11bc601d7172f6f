"""Edit and predict as two uvicorn processes: an event accepted by edit is seen by predict's next request.

Run for both supported topologies: the embedded SQLite store (no Redis) and Redis.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.support.waiting import wait_until

from aisle.core.events import open_event_store_url
from aisle.core.storage import BlobStore

pytestmark = pytest.mark.slow  # starts the edit and predict services as processes

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]  # the repository: process_factories imports tests.support


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def healthy(url: str, proc: subprocess.Popen[bytes]) -> bool:
    """Whether the service at ``url`` answers ``GET /health``; fails when its process died."""
    assert proc.poll() is None, "the service exited"
    try:
        return httpx.get(f"{url}/health", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture(params=["embedded", "redis"])
def env(request: pytest.FixtureRequest, tmp_path: Path, store: BlobStore) -> Iterator[dict[str, str]]:
    values = {
        "AISLE_STORAGE_URL": f"file://{tmp_path / 'bucket'}",
        "AISLE_DATA_DIR": str(tmp_path / "data"),
        "AISLE_AUTH": "off",
    }
    os.environ.pop("AISLE_REDIS_URL", None)
    if request.param == "redis":
        values["AISLE_REDIS_URL"] = request.getfixturevalue("redis_url")
        open_event_store_url(values["AISLE_REDIS_URL"]).clear("shop")
    yield values
    if "AISLE_REDIS_URL" in values:
        open_event_store_url(values["AISLE_REDIS_URL"]).clear("shop")


@pytest.fixture
def processes(env: dict[str, str]) -> Iterator[tuple[str, str]]:
    procs: list[subprocess.Popen[bytes]] = []
    urls = []
    env_all = {k: v for k, v in os.environ.items() if k != "AISLE_REDIS_URL"} | env
    env_all["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    for factory, app_dir in (("aisle.services.edit.app:create_app", None),
                             ("process_factories:predict_app", str(HERE))):  # fmt: skip
        port = free_port()
        cmd = [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            factory,
            "--port",
            str(port),
            "--log-level",
            "warning",
        ]
        if app_dir:
            cmd += ["--app-dir", app_dir]
        procs.append(subprocess.Popen(cmd, env=env_all))
        urls.append(f"http://127.0.0.1:{port}")
    try:
        for url, proc in zip(urls, procs, strict=True):
            wait_until(lambda url=url, proc=proc: healthy(url, proc), f"{url} answers", every=0.1)
        yield urls[0], urls[1]
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=15)


def test_event_from_edit_process_reaches_predict_process(processes: tuple[str, str]) -> None:
    edit_url, predict_url = processes
    with httpx.Client(base_url=edit_url) as edit, httpx.Client(base_url=predict_url) as predict:
        slot = {"slotConfigId": "main", "modelId": "live", "itemCount": 3}
        r = edit.post(
            "/containers", params={"tenant": "shop"}, json={"containerId": "c", "slotConfigurations": [slot]}
        )
        assert r.status_code == 201, r.text
        ask = {
            "containerId": "c",
            "productIds": ["p0"],
            "visitorId": "v1",
            "predictParams": {"strictFiltering": True},
        }
        before = [
            i["id"]
            for i in predict.post("/predict", params={"tenant": "shop"}, json=ask).json()["response_data"]
        ]
        assert before == ["p1", "p2", "p3"]
        event = {
            "visitorId": "v1",
            "eventType": "purchase",
            "productId": "p1",
            "timestamp": "2024-05-01T10:00:00Z",
        }
        assert edit.post("/events", params={"tenant": "shop"}, json=event).status_code == 202
        after = [
            i["id"]
            for i in predict.post("/predict", params={"tenant": "shop"}, json=ask).json()["response_data"]
        ]
        assert after == ["p2", "p3"]
