"""A one-line progress display for long builds run from a terminal (imports, indexes, embeddings)."""

from __future__ import annotations

import sys
import time


class ProgressLine:
    """A one-line progress display on stderr: ``index  30000/44441  67%``."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.start = time.perf_counter()

    def __call__(self, stage: str, done: int, total: int) -> None:
        pct = f"{100 * done // total:3d}%" if total else ""
        end = "\n" if done >= total else ""
        sys.stderr.write(
            f"\r{self.label}: {stage:<6} {done:>8}/{total:<8} {pct} "
            f"{time.perf_counter() - self.start:6.1f}s{end}"
        )
        sys.stderr.flush()
