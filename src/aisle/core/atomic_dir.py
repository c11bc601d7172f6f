"""Build a directory of derived data so readers never see it half-written.

Files go into a temporary sibling directory, renamed onto the destination once complete. When
another process finished the same destination first (its marker file exists), that one is kept
and ours discarded: both built the same content from the same inputs.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_directory(dest: Path, marker: str) -> Iterator[Path]:
    """Yield a temporary directory to fill; on success it becomes ``dest``.

    The caller must write ``marker`` (a file name) last: it is how a finished directory is recognised.
    On any exception the temporary directory is removed and ``dest`` is left as it was.

    Raises:
        OSError: ``dest`` exists without ``marker`` (an unfinished or foreign directory).
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        yield tmp
        try:
            os.replace(tmp, dest)
        except OSError:
            if not (dest / marker).exists():
                raise
            shutil.rmtree(tmp, ignore_errors=True)  # another process built the same directory first
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
