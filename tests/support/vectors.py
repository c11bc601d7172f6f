"""A small fashion tenant with text and photo vectors, for tests (real MiniLM and EfficientNet runs).

Built once per directory: later calls with the same ``root`` reuse it (a test session shares one); the
build itself is cached on disk and copied (:mod:`tests.support.build_cache`).
"""

from __future__ import annotations

import gzip
import threading
from dataclasses import dataclass
from pathlib import Path

import orjson

from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants

_LOCK = threading.Lock()


@dataclass(frozen=True)
class MiniTenant:
    """``tenant`` in the bucket at ``storage_url``, derived state in ``data_dir``; ``ids`` its products."""

    tenant: str
    storage_url: str
    data_dir: Path
    ids: list[str]
    images_dir: Path
    has_images: bool


MINI_SOURCES = ("core", "catalog", "search", "vectors")
"""What the small tenant is built by: a change here rebuilds the cached build (tests/support/build_cache)."""


def mini_fashion(
    root: Path, shared_data: Path, *, products: int = 120, images: bool = True, text: bool = True
) -> MiniTenant:
    """The first ``products`` fashion products that have a photo, imported, indexed and embedded.

    ``text`` builds the text vectors (False: imported and indexed only, as ``make run`` leaves a tenant
    before its background build); ``images`` builds the photo vectors too (needs the ``image`` extra;
    skipped, ``has_images`` false, when unavailable). The build is cached on disk for the same sources,
    data and arguments (:mod:`tests.support.build_cache`) and copied into ``root`` on first use there.
    """
    from tests.support.build_cache import cached_build, copy_of, input_key

    from aisle.search.indexes import IndexRegistry

    root = Path(root)
    photos = shared_data / "fashion" / "images"
    url = f"file://{root / 'bucket'}"
    with _LOCK:
        if not (root / "mini.json").exists():
            key = input_key(
                MINI_SOURCES, [shared_data / "fashion" / "products.jsonl.gz"], (products, images, text)
            )

            def build(folder: Path) -> None:
                _build(folder, shared_data, products=products, images=images, text=text)

            copy_of(cached_build(f"mini-fashion-{products}", key, build), root)
        share_models(root / "data")  # for the builds a test makes there itself
        has_images = orjson.loads((root / "mini.json").read_bytes())["has_images"]
        tenants = Tenants(open_blob_store(url), ttl=0)
        ids = IndexRegistry(tenants, root / "data").get("fashion").product_ids()
        return MiniTenant("fashion", url, root / "data", ids, photos, has_images)


def _build(root: Path, shared_data: Path, *, products: int, images: bool, text: bool) -> None:
    """:func:`mini_fashion`'s build into ``root``; ``root/mini.json`` says whether photos were embedded."""
    from aisle.catalog.datasets import fashion
    from aisle.catalog.importer import import_catalog
    from aisle.search.indexes import IndexRegistry
    from aisle.vectors.build import build_text_vectors
    from aisle.vectors.image_build import build_image_vectors
    from aisle.vectors.image_encoder import ImageEncoderUnavailable

    photos = shared_data / "fashion" / "images"
    tenants = Tenants(open_blob_store(f"file://{root / 'bucket'}"), ttl=0)
    source = root / "products.jsonl"
    have = {p.stem for p in photos.iterdir()}
    rows = []
    with gzip.open(shared_data / "fashion" / "products.jsonl.gz") as fh:
        for line in fh:
            row = orjson.loads(line)
            if str(row["id"]) in have:
                rows.append(line.strip())
            if len(rows) >= products:
                break
    source.write_bytes(b"\n".join(rows) + b"\n")
    tenants.write_config("fashion", fashion.configs())
    import_catalog(tenants, "fashion", source)
    data_dir = root / "data"
    IndexRegistry(tenants, data_dir).get("fashion")
    share_models(data_dir)
    if text:
        build_text_vectors(tenants, "fashion", data_dir)
        share_models(data_dir)
    has_images = False
    if images:
        share_models(data_dir)
        try:
            build_image_vectors(tenants, "fashion", data_dir, photos)
            has_images = True
        except ImageEncoderUnavailable:
            has_images = False
        share_models(data_dir)
    (root / "mini.json").write_bytes(orjson.dumps({"has_images": has_images}))


def share_models(data_dir: Path) -> None:
    """Reuse what is derived from the model files alone between tests, sessions and workers: the exported
        image model, the derived MiniLM model, its token states and its embeddings of the similarity floor's
    calibration strings (seconds to tens of seconds each to make;
        the same for every tenant).
        Before a build, links the ones the test cache holds into ``data_dir/models``; after it, keeps the
        ones the build made in the cache (``tests/support/build_cache.CACHE / "models"``)."""
    import os
    import shutil

    from tests.support.build_cache import CACHE

    from aisle.vectors.image_encoder import onnx_path
    from aisle.vectors.query_encoder import TOKEN_STATES
    from aisle.vectors.similarity_floor import NULL_VECTORS
    from aisle.vectors.text_encoder import derived_name

    shared = CACHE / "models"
    for name in (onnx_path(Path(".")).name, TOKEN_STATES, derived_name(), NULL_VECTORS):
        cached, local = shared / name, Path(data_dir) / "models" / name
        if cached.exists() and not local.exists():
            local.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(cached, local)  # files are replaced whole, never written in place
            except OSError:
                shutil.copyfile(cached, local)
        elif local.exists() and not cached.exists():
            shared.mkdir(parents=True, exist_ok=True)
            partial = shared / f".{name}.{os.getpid()}"
            shutil.copyfile(local, partial)
            partial.rename(cached)
