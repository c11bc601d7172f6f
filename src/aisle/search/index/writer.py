"""Build a tenant's tantivy index from a catalog version, atomically.

The index is written to a temporary directory beside its destination and renamed into place
once committed, so a reader never opens a half-built index.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import tantivy

from aisle.catalog.stock_fields import STANDARD_FIELDS
from aisle.catalog.store import Catalog
from aisle.core.atomic_dir import atomic_directory
from aisle.core.tenant_config import AttributeConfiguration
from aisle.search.index.documents import DocumentPlan
from aisle.search.index.schema import ANALYZER, build_analyzer, build_schema
from aisle.search.index.text_prep import text_prep

Progress = Callable[[str, int, int], None]
# Bumped whenever what is written into an index changes (analysis, normalisation, fields), so
# existing indexes are rebuilt rather than read with the wrong assumptions.
INDEX_FORMAT = 3  # 3: every document carries its stock (stock_in, stock_stores)


NOT_INDEXED = {"ask", "question"}
"""Attribute fields that play no part in the index (guided search's)."""


def index_dir(data_dir: Path, tenant: str, version: str, config: AttributeConfiguration) -> Path:
    """Where the index of ``tenant``'s catalog ``version`` under ``config`` lives in the data dir.

    The index format and the attribute configuration's hash are part of the name: a change of
    either means a new index. Guided search's wording and choice (``ask``, ``question``) are left out
    of the hash: they change no index, and an index built before they existed keeps its name.
    """
    indexed = config.model_dump_json(exclude={"attributes": {"__all__": NOT_INDEXED}})
    digest = hashlib.sha1(f"{INDEX_FORMAT}:{indexed}".encode()).hexdigest()[:10]
    return Path(data_dir) / "indexes" / tenant / f"{version}-{digest}"


def index_built(dest: Path) -> bool:
    """Whether ``dest`` holds a finished index (its ``CATALOG_VERSION`` marker is written last)."""
    return (Path(dest) / "CATALOG_VERSION").exists()


def ensure_index(
    catalog: Catalog, config: AttributeConfiguration, dest: Path, *, progress: Progress | None = None
) -> Path:
    """``dest`` built by :func:`build_index` unless it is built already, one build per host: the
    processes sharing a data dir take an exclusive ``flock`` on the tenant's folder of indexes (its
    parent), so after a compaction the second search worker waits for the first's index (seconds)
    instead of building its own copy alongside it on the same cores. Returns ``dest``."""
    dest = Path(dest)
    if index_built(dest):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    folder = os.open(dest.parent, os.O_RDONLY)
    try:
        fcntl.flock(folder, fcntl.LOCK_EX)  # released when closed, or when its process dies
        if not index_built(dest):
            build_index(catalog, config, dest, progress=progress)
    finally:
        os.close(folder)
    return dest


BUILD_CHUNK = 10_000
"""Catalog rows turned into Python values at a time while indexing: all of a 1M-product catalog's at
once made the importing process peak at 3.0-3.4 GiB (bench_scale)."""

INDEX_KEEP_S = 600.0
"""How long a superseded index stays on disk (seconds): a process on the host may still be opening it."""


def remove_old_indexes(keep: Path, older_than_s: float = INDEX_KEEP_S) -> list[Path]:
    """Remove the built indexes beside ``keep`` (its tenant's other versions and configurations) that were
    superseded over ``older_than_s`` seconds ago (a newer build beside them finished then); returns those
    removed. A process still serving one keeps its open files; one about to copy it fails its apply and
    opens the current version instead. Unfinished builds (dot folders) are left alone."""
    built: dict[Path, float] = {}
    for path in keep.parent.iterdir() if keep.parent.is_dir() else []:
        marker = path / "CATALOG_VERSION"
        if not path.name.startswith(".") and marker.exists():
            built[path] = marker.stat().st_mtime
    gone: list[Path] = []
    now = time.time()
    for path, at in built.items():
        newer = [t for t in built.values() if t > at]
        if path == keep or not newer or now - min(newer) <= older_than_s:
            continue
        shutil.rmtree(path, ignore_errors=True)
        gone.append(path)
    return gone


def build_index(
    catalog: Catalog,
    config: AttributeConfiguration,
    dest: Path,
    *,
    progress: Progress | None = None,
    heap_bytes: int = 256_000_000,
) -> Path:
    """Index every product of ``catalog`` into ``dest`` (replaced atomically). Returns ``dest``."""
    dest = Path(dest)
    with atomic_directory(dest, "CATALOG_VERSION") as tmp:
        schema = build_schema(config)
        index = tantivy.Index(schema, path=str(tmp))
        index.register_tokenizer(ANALYZER, build_analyzer())
        # one indexing thread: with two, how the documents split into segments changed from build to
        # build, and with it the order of products tied on relevance (4832 of 5956 Home Depot dev
        # queries got another first page from a rebuild of the same catalog)
        writer = index.writer(heap_size=heap_bytes, num_threads=1)
        products = catalog.products
        total = products.height
        plan = DocumentPlan(config)
        names = [attr.name for attr, _, _ in plan.plan if attr.name in products.columns]
        names += [n for n in STANDARD_FIELDS if n in products.columns and n not in names]
        searchable = [a.name for a, _, _ in plan.plan if a.searchable and a.name in products.columns]
        chunks = (
            [products[n].slice(start, BUILD_CHUNK).to_list() for n in searchable]
            for start in range(0, total, BUILD_CHUNK)
        )
        with text_prep(total, chunks) as prep:  # searchable text normalised a chunk ahead (big builds)
            for start in range(0, total, BUILD_CHUNK):  # Python values of one chunk at a time (issue 42)
                part = products.slice(start, BUILD_CHUNK)
                ids = part["id"].to_list()
                present = [(name, part[name].to_list()) for name in names]
                texts = list(zip(searchable, prep.next(), strict=True)) if prep is not None else []
                for j, pid in enumerate(ids):
                    i = start + j
                    fields = {name: values[j] for name, values in present}
                    done = {name: column[j] for name, column in texts}
                    writer.add_document(plan.document(i, pid, fields, done))
                    if progress and (i + 1) % 10000 == 0:
                        progress("index", i + 1, total)
        writer.commit()
        writer.wait_merging_threads()
        (tmp / "CATALOG_VERSION").write_text(catalog.version)
        if progress:
            progress("index", total, total)
    return dest
