"""atomic_directory: a failed build leaves nothing; a finished one is never half visible or clobbered."""

from __future__ import annotations

from pathlib import Path

import pytest

from aisle.core.atomic_dir import atomic_directory


def test_success_renames_into_place(tmp_path: Path) -> None:
    dest = tmp_path / "idx" / "v1"
    with atomic_directory(dest, "DONE") as tmp:
        (tmp / "data").write_text("x")
        assert not dest.exists()
        (tmp / "DONE").write_text("")
    assert (dest / "data").read_text() == "x"
    assert [p.name for p in dest.parent.iterdir()] == ["v1"]


def test_failure_leaves_no_trace(tmp_path: Path) -> None:
    dest = tmp_path / "v1"
    with pytest.raises(RuntimeError), atomic_directory(dest, "DONE") as tmp:
        (tmp / "data").write_text("x")
        raise RuntimeError("build failed")
    assert list(tmp_path.iterdir()) == []


def test_a_finished_directory_built_first_is_kept(tmp_path: Path) -> None:
    dest = tmp_path / "v1"
    with atomic_directory(dest, "DONE") as tmp:
        (tmp / "who").write_text("first")
        (tmp / "DONE").write_text("")
    with atomic_directory(dest, "DONE") as tmp:
        (tmp / "who").write_text("second")
        (tmp / "DONE").write_text("")
    assert (dest / "who").read_text() == "first"
    assert [p.name for p in tmp_path.iterdir()] == ["v1"]
