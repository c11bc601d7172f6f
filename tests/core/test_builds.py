"""The build board (aisle.core.builds: files, or Redis for replicas) and the one-builder lock."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from aisle.core.builds import STALE_AFTER_S, Build, BuildBoard, BuildReporter, FileBuildBoard
from aisle.demo.builder import builder_lock


@pytest.fixture(params=["file", "redis"])
def board(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[BuildBoard, str]]:
    """Each backend of the board, and a tenant name of the test's own (the Redis database is shared)."""
    if request.param == "file":
        yield FileBuildBoard(tmp_path), "shop"
        return
    from aisle.core.builds_redis import RedisBuildBoard

    redis = RedisBuildBoard(request.getfixturevalue("redis_url"))
    tenant = f"builds-{secrets.token_hex(4)}"
    yield redis, tenant
    redis.clear(tenant)


def test_eta_extrapolates_the_elapsed_time_over_the_fraction_done() -> None:
    """A quarter done after 10 s leaves 30 s; no ETA before any progress or once not running."""
    running = Build(
        "shop", "text_vectors", "running", done=250, total=1000, started_at=100.0, updated_at=110.0
    )
    assert running.eta_s == pytest.approx(30.0)
    assert running.to_dict()["etaSeconds"] == 30
    assert Build("shop", "a", "running", done=0, total=1000, started_at=100.0, updated_at=110.0).eta_s is None
    assert Build("shop", "a", "done", done=1000, total=1000, started_at=100.0, updated_at=110.0).eta_s is None


def test_a_build_reports_its_progress_and_eta_then_done(board: tuple[BuildBoard, str]) -> None:
    board_, shop = board
    reporter = BuildReporter(board_, shop, "text_vectors")
    reporter.queue()
    assert board_.building(shop, "text_vectors") is not None
    assert board_.get(shop, "text_vectors").state == "queued"  # type: ignore[union-attr]
    reporter.progress("embed", 250, 1000)
    running = board_.get(shop, "text_vectors")
    assert running is not None and running.state == "running" and running.percent == 25
    assert running.eta_s is not None and running.to_dict()["etaSeconds"] == round(running.eta_s)
    reporter.finish()
    done = board_.get(shop, "text_vectors")
    assert done is not None and done.state == "done" and done.percent == 100 and not done.active
    assert board_.building(shop, "text_vectors") is None
    assert [b.to_dict()["state"] for b in board_.all() if b.tenant == shop] == ["done"]
    assert [b.tenant for b in board_.by_tenant()[shop]] == [shop]


def test_a_failed_build_keeps_its_reason(board: tuple[BuildBoard, str]) -> None:
    board_, shop = board
    BuildReporter(board_, shop, "ranker").fail("no judgments")
    failed = board_.get(shop, "ranker")
    assert failed is not None and failed.state == "failed" and failed.message == "no judgments"
    assert board_.building(shop, "ranker") is None


def test_a_build_whose_builder_died_reads_as_interrupted(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    board = FileBuildBoard(tmp_path)
    board.write(Build("shop", "image_vectors", "running", 10, 100, "embed", 1.0, pid=gone.pid))
    build = board.get("shop", "image_vectors")
    assert build is not None and build.state == "interrupted" and not build.active
    assert board.building("shop", "image_vectors") is None  # so the vectors answer "missing", not "building"


def test_an_unreadable_board_file_is_no_build(tmp_path: Path) -> None:
    board = FileBuildBoard(tmp_path)
    (tmp_path / "builds" / "shop").mkdir(parents=True)
    (tmp_path / "builds" / "shop" / "ranker.json").write_text("{half")
    assert board.get("shop", "ranker") is None and board.all() == []


def test_one_builder_at_a_time(tmp_path: Path) -> None:
    with builder_lock(tmp_path) as first:
        assert first
        with builder_lock(tmp_path) as second:
            assert not second
    with builder_lock(tmp_path) as again:
        assert again


def test_aisle_status_lists_each_build_with_percentage(tmp_path: Path) -> None:
    env = {"AISLE_STORAGE_URL": f"file://{tmp_path / 'bucket'}", "AISLE_DATA_DIR": str(tmp_path / "data")}
    BuildReporter(FileBuildBoard(tmp_path / "data"), "shop", "text_vectors").progress("embed", 30, 120)
    BuildReporter(FileBuildBoard(tmp_path / "data"), "shop", "ranker").fail("no judgments")
    run = subprocess.run(
        [sys.executable, "-m", "aisle.cli", "status"], env=os.environ | env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].split()[:4] == ["tenant", "artifact", "state", "done"]
    # this test process wrote the running build and is alive, so it reads as running
    assert lines[1].split()[:4] == ["shop", "ranker", "failed", "0%"] and "no judgments" in lines[1]
    assert lines[2].split()[:4] == ["shop", "text_vectors", "running", "25%"]
    as_json = subprocess.run(
        [sys.executable, "-m", "aisle.cli", "status", "--json"],
        env=os.environ | env,
        capture_output=True,
        text=True,
    )
    doc = json.loads(as_json.stdout)
    assert [(b["artifact"], b["state"], b["percent"]) for b in doc["shop"]] == [
        ("ranker", "failed", 0),
        ("text_vectors", "running", 25),
    ]


def test_the_redis_board_is_shared_and_tells_a_stale_remote_build_from_a_live_one(redis_url: str) -> None:
    import secrets
    import time

    from aisle.core.builds_redis import RedisBuildBoard

    tenant = f"builds-{secrets.token_hex(4)}"  # a name of its own: the Redis database is shared
    writer, reader = RedisBuildBoard(redis_url), RedisBuildBoard(redis_url)  # two replicas
    try:
        BuildReporter(writer, tenant, "text_vectors").progress("embed", 30, 120)
        seen = reader.building(tenant, "text_vectors")
        assert seen is not None and seen.state == "running" and seen.percent == 25
        now = time.time()
        # written by another machine: alive while it keeps writing, interrupted once it goes quiet
        elsewhere = Build(tenant, "ranker", "running", 1, 2, "train", now, pid=1, host="other-host")
        writer.write(elsewhere)
        assert reader.building(tenant, "ranker") is not None
        stale = {**elsewhere.__dict__, "updated_at": now - STALE_AFTER_S - 1}
        writer.client.hset(f"aisle:{tenant}:builds", "ranker", json.dumps(stale))
        assert reader.get(tenant, "ranker").state == "interrupted"  # type: ignore[union-attr]
        assert [(b.tenant, b.artifact) for b in reader.all() if b.tenant == tenant] == [
            (tenant, "ranker"),
            (tenant, "text_vectors"),
        ]
    finally:
        writer.clear(tenant)
    assert reader.by_tenant().get(tenant) is None


def test_a_board_on_an_unreachable_redis_reads_as_no_build() -> None:
    from tests.support.sockets import free_port

    from aisle.core.builds_redis import RedisBuildBoard

    board = RedisBuildBoard(f"redis://127.0.0.1:{free_port()}/0")
    BuildReporter(board, "shop", "ranker").fail("no judgments")  # dropped, not raised
    assert board.get("shop", "ranker") is None and board.all() == []
