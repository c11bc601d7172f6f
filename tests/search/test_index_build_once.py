"""One index build per host: processes sharing a data dir wait for the one building a version's index
(after a compaction every search worker wants the new version at once)."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

import polars as pl

from aisle.catalog.store import Catalog
from aisle.core.tenant_config import Attribute, AttributeConfiguration
from aisle.search.index import writer
from aisle.search.index.writer import ensure_index, remove_old_indexes

CONFIG = AttributeConfiguration(
    attributes=[Attribute(name="title", type="text", role="title", searchable=True)]
)
CATALOG = Catalog("v1", pl.DataFrame({"id": ["1", "2"], "title": ["red drill", "blue saw"]}))


def test_a_second_builder_waits_for_the_first_and_builds_nothing(tmp_path: Path, monkeypatch) -> None:
    builds: list[Path] = []
    real = writer.build_index

    def counting(*args, **kwargs):
        builds.append(args[2])
        return real(*args, **kwargs)

    monkeypatch.setattr(writer, "build_index", counting)
    dest = tmp_path / "indexes" / "t" / "v1-abc"
    dest.parent.mkdir(parents=True)
    held = os.open(dest.parent, os.O_RDONLY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)  # another worker is building
        second = threading.Thread(target=ensure_index, args=(CATALOG, CONFIG, dest))
        second.start()
        second.join(timeout=0.5)
        assert second.is_alive(), "the second builder did not wait for the lock"
        real(CATALOG, CONFIG, dest)  # the first one's build ends
    finally:
        os.close(held)
    second.join()
    assert builds == []  # it found the index built and opened that
    assert (dest / "CATALOG_VERSION").read_text() == "v1"


def test_a_missing_index_is_built_once(tmp_path: Path) -> None:
    dest = tmp_path / "v1-abc"
    assert ensure_index(CATALOG, CONFIG, dest) == dest
    marker = (dest / "CATALOG_VERSION").stat().st_mtime_ns
    ensure_index(CATALOG, CONFIG, dest)
    assert (dest / "CATALOG_VERSION").stat().st_mtime_ns == marker


def test_superseded_indexes_are_removed_once_a_newer_build_is_old(tmp_path: Path) -> None:
    folder = tmp_path / "indexes" / "t"
    v0, v1, v2, v3 = (
        ensure_index(CATALOG, CONFIG, folder / name) for name in ("v0-a", "v1-a", "v2-a", "v3-a")
    )
    (folder / ".v4-a.tmp").mkdir()  # a build under way
    now = time.time()
    for path, age in ((v0, 7200), (v1, 3600), (v2, 60), (v3, 30)):
        os.utime(path / "CATALOG_VERSION", (now - age, now - age))
    # v0 was superseded an hour ago (v1 built), v1 a minute ago (v2 built): only v0 goes
    assert remove_old_indexes(v3) == [v0]
    assert sorted(p.name for p in folder.iterdir()) == [".v4-a.tmp", "v1-a", "v2-a", "v3-a"]
    os.utime(v2 / "CATALOG_VERSION", (now - 1800, now - 1800))
    assert remove_old_indexes(v3) == [v1]  # superseded half an hour ago now; v2 by v3, 30 s ago
