"""A tenant's vector table on disk: ids, the ANN index over them, and content hashes for reuse.

Layout (beside the full-text indexes in the data dir)::

    <data_dir>/vectors/<tenant>/<kind>/<catalog version>-<recipe>/
        BUILT            written last: the table is complete (holds the catalog version)
        ids.json         key -> product id (null for a deleted key)
        hashes.npy       uint64 content hash per key (the text or image bytes embedded)
        ann/             the ANN index (:mod:`aisle.vectors.ann_usearch`)
        similarity_floor.json  text tables: the cosine a product must reach to be close to a query,
                         per query encoder (:mod:`aisle.vectors.similarity_floor`)

``kind`` is ``text`` (MiniLM product text) or ``image`` (EfficientNet-Lite0 photo features). ``recipe``
hashes what went into the vectors (encoder and product-text fields), so a change of either is a new
table. Tables are written to a temporary directory and renamed into place, like the full-text index.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import orjson

from aisle.core.atomic_dir import atomic_directory
from aisle.vectors.query_encoder import StaticQueryEncoder
from aisle.vectors.similarity_floor import save_floors
from aisle.vectors.table_ids import TableIds, TableKeys, load_ids

if TYPE_CHECKING:
    from aisle.vectors.ann_usearch import UsearchAnnIndex

KINDS = ("text", "image")


def tables_dir(data_dir: Path, tenant: str, kind: str) -> Path:
    return Path(data_dir) / "vectors" / tenant / kind


def table_dir(data_dir: Path, tenant: str, kind: str, version: str, recipe: str) -> Path:
    digest = hashlib.sha1(recipe.encode()).hexdigest()[:10]
    return tables_dir(data_dir, tenant, kind) / f"{version}-{digest}"


def content_hash(data: bytes) -> int:
    """64-bit content hash (blake2b), the unit of embedding reuse between catalog versions."""
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def latest_table(data_dir: Path, tenant: str, kind: str, *, upto: str | None = None) -> Path | None:
    """The most recent complete table of ``tenant``/``kind`` (versions sort by time) whose catalog
    version is at most ``upto`` (None: any), or None."""
    root = tables_dir(data_dir, tenant, kind)
    if not root.is_dir():
        return None
    built = [
        d
        for d in root.iterdir()
        if d.is_dir()
        and not d.name.startswith(".")
        and (upto is None or d.name.rsplit("-", 1)[0] <= upto)
        and (d / "BUILT").exists()
    ]
    # newest catalog version first; among tables of one version (another recipe), the last built
    return max(
        built, key=lambda d: (d.name.rsplit("-", 1)[0], (d / "BUILT").stat().st_mtime_ns), default=None
    )


@dataclass
class VectorTable:
    """Loaded table: ``ids[key]`` (None when deleted), ``key_of`` its inverse, the ANN index, and the
    tenant's static query encoder when the build fitted one (text tables since issue 18).

    Writes (:meth:`upsert`, :meth:`delete`) are serialised by a lock and persisted with :meth:`save`.
    With a bucket, the writes come from the tenant's write log (:mod:`aisle.vectors.writes`): ``base``
    is the last log entry the table's files supersede (its manifest's ``writes``), ``applied`` the last
    one applied in memory since it was loaded.
    """

    path: Path
    version: str
    ids: TableIds | list[str | None]
    hashes: np.ndarray
    ann: UsearchAnnIndex
    key_of: MutableMapping[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    generation: int = 0
    query: StaticQueryEncoder | None = None
    base: int = 0
    applied: int = 0

    def __post_init__(self) -> None:
        if not self.key_of and not isinstance(self.key_of, TableKeys):
            self.key_of = {pid: k for k, pid in enumerate(self.ids) if pid is not None}

    @property
    def dimension(self) -> int:
        return self.ann.ndim

    def __len__(self) -> int:
        return len(self.key_of)

    @classmethod
    def load(cls, path: Path) -> VectorTable:
        """Read a complete table: its ids and their lookup mapped (:mod:`aisle.vectors.table_ids`; read
        into memory where the mapped files cannot be written), its hashes mapped copy-on-write.
        Raises FileNotFoundError when it is not built."""
        path = Path(path)
        version = (path / "BUILT").read_text().strip()
        ids: TableIds | list[str | None]
        key_of: MutableMapping[str, int]
        try:
            ids, key_of = load_ids(path)
        except OSError:  # a read-only table (or a full disk): a list and a dict, in this process
            ids, key_of = orjson.loads((path / "ids.json").read_bytes()), {}
        from aisle.vectors.ann_usearch import UsearchAnnIndex  # onnxruntime + usearch: ~40 MiB, 0.4 s

        ann = UsearchAnnIndex.load(path / "ann")
        hashes = np.load(path / "hashes.npy", mmap_mode="c")
        return cls(path, version, ids, hashes, ann, key_of=key_of, query=StaticQueryEncoder.load(path))

    def upsert(self, ids: list[str], vectors: np.ndarray, hashes: np.ndarray | None = None) -> int:
        """Index ``vectors`` (float32, (n, dimension), unit length) under product ``ids``; returns n."""
        if vectors.shape != (len(ids), self.dimension):
            raise ValueError(f"expected vectors of shape ({len(ids)}, {self.dimension})")
        with self.lock:
            keys = []
            for pid in ids:
                key = self.key_of.get(pid)
                if key is None:
                    key = len(self.ids)
                    self.ids.append(pid)
                    self.key_of[pid] = key
                keys.append(key)
            karr = np.asarray(keys, dtype=np.int64)
            if self.hashes.shape[0] < len(self.ids):
                self.hashes = np.concatenate(
                    [self.hashes, np.zeros(len(self.ids) - self.hashes.shape[0], dtype=np.uint64)]
                )
            self.hashes[karr] = hashes if hashes is not None else 0
            self.ann.add(karr, vectors)
            self.generation += 1
        return len(ids)

    def delete(self, ids: list[str]) -> int:
        """Remove product ``ids``; returns how many were present."""
        with self.lock:
            keys = [self.key_of.pop(pid) for pid in ids if pid in self.key_of]
            for key in keys:
                self.ids[key] = None
            self.ann.remove(np.asarray(keys, dtype=np.int64))
            self.generation += 1
        return len(keys)

    def save(self) -> None:
        """Persist in place (ids and hashes replaced atomically; the ANN files rewritten)."""
        with self.lock:
            self.ann.save(self.path / "ann")
            _atomic_write(self.path / "ids.json", orjson.dumps(list(self.ids)))
            tmp = self.path / "hashes.tmp.npy"
            np.save(tmp, self.hashes)
            os.replace(tmp, self.path / "hashes.npy")


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_table(
    dest: Path,
    version: str,
    ids: list[str],
    vectors: np.ndarray,
    hashes: np.ndarray,
    *,
    extras: Mapping[str, np.ndarray] | None = None,
    floors: Callable[[UsearchAnnIndex], dict[str, float]] | None = None,
) -> Path:
    """Write a complete table of ``vectors`` (float32, (n, d)) for ``ids`` into ``dest``, atomically;
    each of ``extras`` (file name -> array) is saved beside them (``np.save``), and the similarity
    floors ``floors`` computes from the built ANN index (:mod:`aisle.vectors.similarity_floor`)."""
    from aisle.vectors.ann_usearch import UsearchAnnIndex

    with atomic_directory(Path(dest), "BUILT") as tmp:
        for name, array in (extras or {}).items():
            np.save(tmp / name, array)
        ann = UsearchAnnIndex.build(vectors)
        ann.save(tmp / "ann")
        if floors is not None and len(ids):
            save_floors(tmp, floors(ann))
        (tmp / "ids.json").write_bytes(orjson.dumps(ids))
        np.save(tmp / "hashes.npy", hashes.astype(np.uint64))
        (tmp / "BUILT").write_text(version)
    return Path(dest)


def read_table_vectors(path: Path, ids: list[str]) -> np.ndarray | None:
    """Vectors of ``ids`` (float32, (len(ids), d)) read from the files of the complete table at
    ``path`` (no graph is loaded), or None when one of them is not in the table."""
    keys = orjson.loads((path / "ids.json").read_bytes())
    key_of = {pid: k for k, pid in enumerate(keys) if pid is not None}
    present = np.load(path / "ann" / "present.npy")
    wanted = np.fromiter((key_of.get(i, -1) for i in ids), dtype=np.int64, count=len(ids))
    if (wanted < 0).any() or (wanted >= len(present)).any() or not present[wanted].all():
        return None
    return np.asarray(np.load(path / "ann" / "vectors.npy", mmap_mode="r")[wanted], dtype=np.float32)


def reusable(data_dir: Path, tenant: str, kind: str, recipe: str, *, last: int = 3) -> dict[int, np.ndarray]:
    """Vectors (float32) of the ``last`` tables with the same recipe, by content hash (incremental builds).

    Read straight from the files (no graph is loaded); newer tables win on a repeated hash.
    """
    suffix = "-" + hashlib.sha1(recipe.encode()).hexdigest()[:10]
    root = tables_dir(data_dir, tenant, kind)
    if not root.is_dir():
        return {}
    built = sorted(d for d in root.iterdir() if (d / "BUILT").exists() and d.name.endswith(suffix))
    out: dict[int, np.ndarray] = {}
    for path in built[-last:]:
        matrix = np.load(path / "ann" / "vectors.npy", mmap_mode="r")
        present = np.load(path / "ann" / "present.npy")
        hashes = np.load(path / "hashes.npy")
        n = min(len(hashes), len(present))
        for key in np.flatnonzero(present[:n] & (hashes[:n] != 0)):
            out[int(hashes[key])] = np.array(matrix[key], dtype=np.float32)
    return out
