"""Where a search process runs its catalog builds: :class:`ChildBuilds` starts
``python -m aisle.search.build_child`` (see that module for why and the protocol) and waits for it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

from aisle.core.errors import AisleError
from aisle.core.tenant_config import AttributeConfiguration

TIMEOUT_S = 3600.0
"""A child still building after this long is killed (the process then builds what is missing)."""


class ChildBuilds:
    """Runs the builds in children over the bucket at ``storage_url`` and the data dir ``data_dir``."""

    def __init__(self, storage_url: str, data_dir: Path) -> None:
        self.storage_url = storage_url
        self.data_dir = Path(data_dir).resolve()

    def index(self, tenant: str, version: str, attributes: AttributeConfiguration) -> None:
        """Build ``version``'s index directory under ``attributes`` (what is missing of it).

        Raises:
            AisleError: the build's own error (its code kept), RuntimeError: the child failed otherwise.
        """
        self._run(["index", tenant, version], attributes.model_dump_json().encode())

    def suggestions(self, tenant: str) -> None:
        """Build the tenant's suggestion tables for its current catalog, log and configuration.

        Raises:
            AisleError: the build's own error (its code kept), RuntimeError: the child failed otherwise.
        """
        self._run(["suggest", tenant], b"")

    def _run(self, args: list[str], stdin: bytes) -> None:
        cmd = [sys.executable, "-m", "aisle.search.build_child", "--storage-url", self.storage_url]
        cmd += ["--data-dir", str(self.data_dir), *args]
        env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
        done = subprocess.run(cmd, input=stdin, capture_output=True, timeout=TIMEOUT_S, env=env)
        if done.returncode == 0:
            return
        lines = done.stdout.strip().splitlines()
        if done.returncode == 2 and lines and lines[-1].startswith(b'{"error"'):
            error = orjson.loads(lines[-1])["error"]
            raise AisleError(error["message"], code=error["code"])
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-5:]
        raise RuntimeError(f"build child exited {done.returncode}: {' | '.join(tail)}")
