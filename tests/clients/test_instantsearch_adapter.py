"""The InstantSearch adapter's own tests (``clients/instantsearch/test``, node's test runner over
recorded request/answer pairs), run within ``make test``. They need Node.js 18+ only (the adapter has no
runtime dependency); without it they skip, except with ``CI=true``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.conftest import require

ADAPTER = Path(__file__).resolve().parents[2] / "clients" / "instantsearch"


def test_the_adapter_tests_pass() -> None:
    node = shutil.which("node")
    require(node is not None, "Node.js is not installed (apt-get install nodejs)")
    assert node is not None
    files = sorted(str(p.relative_to(ADAPTER)) for p in (ADAPTER / "test").glob("*.test.js"))
    assert len(files) >= 2, files
    run = subprocess.run(
        [node, "--test", *files], cwd=ADAPTER, capture_output=True, text=True, timeout=300, check=False
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "# fail 0" in run.stdout and "# pass 0" not in run.stdout
