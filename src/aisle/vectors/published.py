"""Vector tables in object storage: published once built, downloaded by any replica that lacks them.

A table is derived data that costs minutes of embedding to make, so a replica never rebuilds one: the
builder uploads each complete table to the tenant's scope of the bucket, and a serving process whose
data dir lacks it downloads it (see :class:`~aisle.vectors.store.VectorStore`). Layout in the tenant's
scope (``<table>`` is the local directory name, ``<catalog version>-<recipe digest>``)::

    vectors/<kind>/<table>/<upload id>/<file>   every file of the table (ids.json, hashes.npy, ann/...)
    vectors/<kind>/<table>/manifest.json        written last: {"table", "version", "upload", "files",
                                                "published_at", "writes"}

The files go under a fresh upload id and the manifest naming them is written after the last one, so
a reader that finds a manifest finds every file it lists, and never half of an upload (the same
pattern as the catalog's ``current.json``). A download is written to a temporary directory renamed
into place with its ``BUILT`` marker last (:func:`aisle.core.atomic_dir.atomic_directory`), plus a
``PUBLISHED`` file holding the manifest, which says where the local copy came from.

``writes`` is the last entry of the tenant's vector write log (:mod:`aisle.vectors.writes`) the table
supersedes: replicas apply only the writes after it on top of the table, and publishing prunes the
ones before.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson

from aisle.core.atomic_dir import atomic_directory
from aisle.core.storage import BlobNotFound, BlobStore
from aisle.vectors.table_ids import IDS_PREFIX
from aisle.vectors.writes import WriteLog

MARKER = "BUILT"
PUBLISHED = "PUBLISHED"
ROOT = "vectors"


@dataclass(frozen=True)
class Manifest:
    """One published table: its directory name, catalog version, upload id, files (path -> bytes), and
    the last vector write it supersedes (0 for none)."""

    table: str
    version: str
    upload: str
    files: dict[str, int]
    published_at: str
    writes: int = 0

    def to_json(self) -> bytes:
        return orjson.dumps(self.__dict__)

    @classmethod
    def from_json(cls, raw: bytes) -> Manifest:
        doc = orjson.loads(raw)
        return cls(
            doc["table"], doc["version"], doc["upload"], dict(doc["files"]), doc["published_at"],
            int(doc.get("writes", 0)),
        )  # fmt: skip


def _table_version(name: str) -> str:
    return name.rsplit("-", 1)[0]


def publish_table(scope: BlobStore, kind: str, path: Path, *, writes: int | None = None) -> Manifest:
    """Upload the complete local table at ``path`` to the tenant ``scope`` (files first, manifest last)
    and record the manifest in the table's ``PUBLISHED`` file; returns the manifest. The table
    supersedes the vector writes up to ``writes`` (None: the write log's head now), which are pruned.

    Raises:
        FileNotFoundError: ``path`` is not a complete table (no ``BUILT``).
        StorageUnavailable (503): the bucket failed or timed out.
    """
    path = Path(path)
    version = (path / MARKER).read_text().strip()
    log = WriteLog(scope, kind)
    if writes is None:
        writes = log.head()
    upload = datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(4)
    base = f"{ROOT}/{kind}/{path.name}"
    files: dict[str, int] = {}
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = file.relative_to(path).as_posix()
        if rel in (MARKER, PUBLISHED) or rel.endswith(".tmp") or ".tmp." in rel:
            continue
        if rel.startswith((IDS_PREFIX, ".")):  # derived here from ids.json (table_ids), and lock files
            continue
        data = file.read_bytes()
        scope.put(f"{base}/{upload}/{rel}", data)
        files[rel] = len(data)
    manifest = Manifest(path.name, version, upload, files, datetime.now(UTC).isoformat(), writes)
    scope.put(f"{base}/manifest.json", manifest.to_json())
    (path / PUBLISHED).write_bytes(manifest.to_json())
    log.prune(writes)
    return manifest


def local_manifest(path: Path) -> Manifest | None:
    """The manifest a local table was published or downloaded as, or None (a local build only)."""
    try:
        return Manifest.from_json((Path(path) / PUBLISHED).read_bytes())
    except (OSError, orjson.JSONDecodeError, KeyError):
        return None


def newest_published(scope: BlobStore, kind: str, *, upto: str | None = None) -> Manifest | None:
    """The newest published table of ``kind`` whose catalog version is at most ``upto`` (None: any):
    the newest catalog version, and among its tables (other recipes) the last published. None when
    the bucket has none. Costs one listing and one GET per table of that version.

    Raises:
        StorageUnavailable (503): the bucket failed or timed out.
    """
    names = [n for n in scope.list_dirs(f"{ROOT}/{kind}") if upto is None or _table_version(n) <= upto]
    for version in sorted({_table_version(n) for n in names}, reverse=True):
        found = []
        for name in names:
            if _table_version(name) != version:
                continue
            try:
                found.append(Manifest.from_json(scope.get(f"{ROOT}/{kind}/{name}/manifest.json")))
            except BlobNotFound:
                continue  # files still uploading: not published yet
        if found:
            return max(found, key=lambda m: m.published_at)
    return None


def download_table(scope: BlobStore, kind: str, manifest: Manifest, dest: Path) -> Path:
    """Download the table ``manifest`` names into ``dest`` (atomically, ``BUILT`` last); returns ``dest``.

    When another process completed ``dest`` first, theirs is kept (the same files).

    Raises:
        BlobNotFound: an upload listed by the manifest was removed meanwhile (try the manifest again).
        StorageUnavailable (503): the bucket failed or timed out.
    """
    base = f"{ROOT}/{kind}/{manifest.table}/{manifest.upload}"
    with atomic_directory(Path(dest), MARKER) as tmp:
        for rel in manifest.files:
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(scope.get(f"{base}/{rel}"))
        (tmp / PUBLISHED).write_bytes(manifest.to_json())
        (tmp / MARKER).write_text(manifest.version)
    return Path(dest)


def fetch_published(scope: BlobStore, kind: str, dest: Path) -> bool:
    """Download the published table named like ``dest`` (the same catalog version and recipe) into
    ``dest``; False when the bucket has none. What a builder does before embedding anything.

    Raises:
        StorageUnavailable (503): the bucket failed or timed out.
    """
    try:
        raw = scope.get(f"{ROOT}/{kind}/{Path(dest).name}/manifest.json")
    except BlobNotFound:
        return False
    download_table(scope, kind, Manifest.from_json(raw), dest)
    return True


def ensure_published(scope: BlobStore, kind: str, path: Path, *, writes: int | None = None) -> Path:
    """Publish the complete local table at ``path`` unless it was published or downloaded already
    (it has a ``PUBLISHED`` file), superseding the vector writes up to ``writes`` (see
    :func:`publish_table`); returns ``path``. Raises StorageUnavailable (503)."""
    if local_manifest(path) is None:
        publish_table(scope, kind, path, writes=writes)
    return Path(path)


def fetch_newest_of_recipe(scope: BlobStore, kind: str, root: Path, digest: str) -> Path | None:
    """Make sure the newest published table whose name ends with ``-<digest>`` (the same recipe, any
    catalog version) is under ``root`` (downloading it when missing); returns its directory, or None
    when the bucket has none. What an incremental build on a machine without earlier tables reuses
    vectors from. Raises StorageUnavailable (503)."""
    names = [n for n in scope.list_dirs(f"{ROOT}/{kind}") if n.endswith(f"-{digest}")]
    for name in sorted(names, key=_table_version, reverse=True):
        dest = Path(root) / name
        if (dest / MARKER).exists():
            return dest
        try:
            manifest = Manifest.from_json(scope.get(f"{ROOT}/{kind}/{name}/manifest.json"))
        except BlobNotFound:
            continue
        return download_table(scope, kind, manifest, dest)
    return None
