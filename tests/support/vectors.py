"""A small fashion tenant with text and photo vectors, for tests (real MiniLM and EfficientNet runs).

Built once per directory: later calls with the same ``root`` reuse it (a test session shares one).
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


def mini_fashion(
    root: Path, shared_data: Path, *, products: int = 120, images: bool = True, text: bool = True
) -> MiniTenant:
    """The first ``products`` fashion products that have a photo, imported, indexed and embedded.

    ``text`` builds the text vectors (False: imported and indexed only, as ``make run`` leaves a tenant
    before its background build); ``images`` builds the photo vectors too (needs the ``image`` extra;
    skipped, ``has_images`` false, when unavailable).
    """
    from aisle.catalog.datasets import fashion
    from aisle.catalog.importer import import_catalog
    from aisle.search.indexes import IndexRegistry
    from aisle.vectors.build import build_text_vectors
    from aisle.vectors.image_build import build_image_vectors
    from aisle.vectors.image_encoder import ImageEncoderUnavailable

    root = Path(root)
    photos = shared_data / "fashion" / "images"
    with _LOCK:
        url = f"file://{root / 'bucket'}"
        tenants = Tenants(open_blob_store(url), ttl=0)
        source = root / "products.jsonl"
        if not source.exists():
            root.mkdir(parents=True, exist_ok=True)
            have = {p.stem for p in photos.iterdir()}
            rows = []
            with gzip.open(shared_data / "fashion" / "products.jsonl.gz") as fh:
                for line in fh:
                    row = orjson.loads(line)
                    if str(row["id"]) in have:
                        rows.append(line.strip())
                    if len(rows) >= products:
                        break
            tmp = source.with_suffix(".tmp")
            tmp.write_bytes(b"\n".join(rows) + b"\n")
            tmp.rename(source)
        if not tenants.exists("fashion"):
            tenants.write_config("fashion", fashion.configs())
            import_catalog(tenants, "fashion", source)
        data_dir = root / "data"
        index = IndexRegistry(tenants, data_dir).get("fashion")
        if text:
            build_text_vectors(tenants, "fashion", data_dir)
        has_images = False
        if images:
            _share_model(data_dir)
            try:
                build_image_vectors(tenants, "fashion", data_dir, photos)
                has_images = True
            except ImageEncoderUnavailable:
                has_images = False
            _share_model(data_dir)
        ids = index.product_ids()
        return MiniTenant("fashion", url, data_dir, ids, photos, has_images)


def _share_model(data_dir: Path) -> None:
    """Reuse the exported image model between test sessions (the export takes tens of seconds)."""
    import shutil
    import tempfile

    from aisle.vectors.image_encoder import onnx_path

    cached = Path(tempfile.gettempdir()) / "aisle-test-cache" / onnx_path(Path(".")).name
    local = onnx_path(data_dir)
    if cached.exists() and not local.exists():
        local.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cached, local)
    elif local.exists() and not cached.exists():
        cached.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(local, cached.with_suffix(".tmp"))
        cached.with_suffix(".tmp").rename(cached)
