"""Test fixtures built once on disk, keyed by a hash of their inputs, and shared by sessions and workers.

The demo tenants (a real import and tantivy index of fashion and Home Depot, about 26 s) and the small
fashion tenant with vectors (real MiniLM and EfficientNet runs) are the slowest fixtures of the suite.
:func:`cached_build` builds one into ``<cache>/<name>-<key>`` the first time and reuses it afterwards:
by the other pytest-xdist worker of the same run (it waits on a file lock while the first one builds),
and by later runs while nothing it was built from changed. The key hashes:

- the source of the ``aisle`` packages the build runs (a change to the importer or the index rebuilds);
- the size and modification time of each data file it reads (``../shared/data``);
- the build's own parameters (tenants, product count...).

A build is written to a temporary directory and renamed into place when complete, so a run stopped
halfway never leaves a cache entry that looks whole. Callers copy the entry (:func:`copy_of`) before
using it: a test may write into its tenant, and the cache must stay as built.

``AISLE_TEST_CACHE`` names the cache folder (default ``var/test-cache`` in the checkout, which
``make clean`` removes).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "aisle"
CACHE = Path(os.environ.get("AISLE_TEST_CACHE", ROOT / "var" / "test-cache"))
KEEP = 4
"""Entries kept per name: older keys (from earlier source) are removed when a new one is built."""


def input_key(packages: Iterable[str], data_files: Iterable[Path], params: object) -> str:
    """A 16-hex-digit hash of the ``aisle`` sources under ``packages`` (paths relative to ``src/aisle``:
    a package folder or one module), each data file's size and mtime, and ``repr(params)``."""
    digest = hashlib.sha256(repr(params).encode())
    for package in sorted(packages):
        target = SRC / package
        files = sorted(target.rglob("*.py")) if target.is_dir() else [target]
        for path in files:
            digest.update(str(path.relative_to(SRC)).encode())
            digest.update(path.read_bytes())
    for path in sorted(Path(p) for p in data_files):
        stat = path.stat()
        digest.update(f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def cached_build(name: str, key: str, build: Callable[[Path], None]) -> Path:
    """The directory ``build`` made for ``key``: built into a fresh folder on first use, then reused.

    ``build(folder)`` writes everything into ``folder`` (it exists and is empty). Concurrent callers
    (pytest-xdist workers) wait on one file lock; the first builds, the others find it done.

    Raises whatever ``build`` raises; nothing is cached then.
    """
    CACHE.mkdir(parents=True, exist_ok=True)
    entry = CACHE / f"{name}-{key}"
    if entry.is_dir():
        return entry
    with (CACHE / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if entry.is_dir():
            return entry
        partial = CACHE / f".{name}-{key}.partial-{os.getpid()}"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        try:
            build(partial)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
        partial.rename(entry)
        _forget_old(name, keep=entry)
    return entry


def copy_of(entry: Path, dest: Path) -> Path:
    """``entry``'s files copied into ``dest`` (created; existing files are replaced). Returns ``dest``."""
    shutil.copytree(entry, dest, dirs_exist_ok=True, symlinks=True)
    return dest


def _forget_old(name: str, keep: Path) -> None:
    entries = sorted(
        (p for p in CACHE.glob(f"{name}-*") if p.is_dir() and p != keep),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    for old in entries[KEEP - 1 :]:
        shutil.rmtree(old, ignore_errors=True)
