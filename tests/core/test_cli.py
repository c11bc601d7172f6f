"""The shared CLI error path: bad input exits 2 with ``error [code]: message`` and writes nothing."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from aisle.core.storage.resolver import open_blob_store


def aisle(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run the real ``aisle`` command line (``python -m aisle.cli``)."""
    return subprocess.run(
        [sys.executable, "-m", "aisle.cli", *args], env=os.environ | env, capture_output=True, text=True
    )


@pytest.fixture
def env(tmp_path):
    return {"AISLE_STORAGE_URL": f"file://{tmp_path / 'bucket'}", "AISLE_DATA_DIR": str(tmp_path / "data")}


@pytest.mark.parametrize(
    "args",
    [
        ["ranker", "list", "nosuch"],
        ["ranker", "use", "nosuch", "1"],
        ["ranker", "off", "nosuch"],
        ["ranker", "train", "nosuch", "--source", "behaviour"],
        ["vectors", "build", "nosuch"],
    ],
)
def test_unknown_tenant_is_a_clear_error_and_writes_nothing(env, args):
    result = aisle(*args, env=env)
    assert result.returncode == 2, result.stderr
    assert "error [tenant_not_found]: tenant 'nosuch' does not exist" in result.stderr
    assert open_blob_store(env["AISLE_STORAGE_URL"]).list_dirs("") == []


def test_ranker_train_refuses_an_unknown_source_and_judgments_without_a_file(env):
    result = aisle("ranker", "train", "nosuch", "--source", "magic", env=env)
    assert result.returncode == 2 and "--source must be judgments or behaviour" in result.stderr
    result = aisle("ranker", "train", "nosuch", env=env)
    assert result.returncode == 2 and "--source judgments needs --judgments PATH" in result.stderr


def test_plain_message_errors_use_the_same_prefix(env, tmp_path):
    not_a_folder = tmp_path / "photos.txt"
    not_a_folder.write_text("x")
    result = aisle("vectors", "build-images", "fashion", "--images", str(not_a_folder), env=env)
    assert result.returncode == 2, result.stderr
    assert f"error: {not_a_folder} is not a folder" in result.stderr


def test_a_catalog_a_model_cannot_train_on_is_a_clear_error_and_registers_nothing(env):
    """GOOD_BETTER_BEST needs prices: the CLI says so (exit 2) instead of printing a traceback."""
    import polars as pl
    from tests.support.recs import write_tenant

    store = open_blob_store(env["AISLE_STORAGE_URL"])
    products = pl.DataFrame({"id": ["1", "2"], "title": ["red shirt", "blue shirt"], "category": ["a", "a"]})
    write_tenant(store, "tiny", products)
    before = sorted(store.list("tiny/"))
    result = aisle("train", "GOOD_BETTER_BEST", "--tenant", "tiny", env=env)
    assert result.returncode == 2, result.stderr
    assert "error: GOOD_BETTER_BEST needs a price" in result.stderr
    assert "Traceback" not in result.stderr
    assert sorted(store.list("tiny/")) == before
