"""The command line refuses what it does not understand, and reads a list as a newcomer writes one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import typer
from tests.support.auth import free_port
from typer.testing import CliRunner

from aisle.cli import app, register_commands
from aisle.cli.common import names
from aisle.cli.serve import SERVE_NAMES

register_commands()
runner = CliRunner()


def test_a_list_option_takes_commas_and_repeats_in_order_without_repeats() -> None:
    assert names(["search,auth"], SERVE_NAMES, "--only") == ["search", "auth"]
    assert names(["search", "auth"], SERVE_NAMES, "--only") == ["search", "auth"]
    assert names(["search, auth", "predict,search"], SERVE_NAMES, "--only") == ["search", "auth", "predict"]
    assert names([], SERVE_NAMES, "--only") == []


@pytest.mark.parametrize("given", [["serch"], ["search,serch"], ["search", "Search"], [","]])
def test_a_list_option_refuses_what_it_does_not_know(given: list[str]) -> None:
    with pytest.raises(typer.BadParameter):
        names(given, SERVE_NAMES, "--only")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["serve", "--only", "search,serch"], "unknown 'serch'"),
        (["serve", "--only", "nothing"], "unknown 'nothing'"),
        (["serve", "--workers", "0"], "--workers"),
        (["serve", "--no-such-option"], "No such option"),
        (["demo", "--only", "fashion,shoes"], "unknown 'shoes'"),
        (["eval", "recs", "--only", "yoochoose,nope"], "unknown 'nope'"),
    ],
)
def test_serve_demo_and_eval_refuse_unknown_names_and_values_before_starting(
    args: list[str], said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AISLE_STORAGE_URL", f"file://{tmp_path / 'bucket'}")
    monkeypatch.setenv("AISLE_DATA_DIR", str(tmp_path / "data"))
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert said in result.output, result.output
    assert not (tmp_path / "bucket").exists()  # refused before anything was written


def test_serve_only_search_comma_auth_starts_both(tmp_path: Path) -> None:
    """The spelling that used to start nothing and exit 0."""
    search, auth = free_port(), free_port()
    env = {
        **os.environ,
        "AISLE_STORAGE_URL": f"file://{tmp_path / 'bucket'}",
        "AISLE_DATA_DIR": str(tmp_path / "data"),
        "AISLE_AUTH": "off",
        "AISLE_SEARCH_PORT": str(search),
        "AISLE_AUTH_PORT": str(auth),
        "AISLE_WORKERS": "1",
    }
    cmd = [sys.executable, "-m", "aisle.cli", "serve", "--only", "search,auth"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    up: set[int] = set()
    try:
        deadline = time.monotonic() + 90  # a guard against a hung start, not a figure under test
        while up != {search, auth}:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            for port in {search, auth} - up:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                        up.add(port)
                except httpx.HTTPError:
                    pass
            assert time.monotonic() < deadline, f"not started: { ({search, auth} - up) }"
            time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGTERM)
        stdout, _ = proc.communicate(timeout=30)
    out = stdout.decode()
    assert f"search   http://127.0.0.1:{search}" in out and f"auth     http://127.0.0.1:{auth}" in out, out
