"""Vector tables and the image model through the bucket: a process with an empty data dir downloads
them, never embeds; a half-uploaded table is never picked."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from tests.conftest import require
from tests.support.vectors import MiniTenant

from aisle.core.storage import open_blob_store
from aisle.core.tenancy import tenant_scope
from aisle.vectors.image_encoder import ImageEncoder, onnx_path
from aisle.vectors.published import local_manifest, newest_published
from aisle.vectors.search import VectorSearch
from aisle.vectors.store import VectorIndexMissing, VectorStore
from aisle.vectors.table import latest_table


def test_an_empty_data_dir_downloads_the_published_table_and_again_once_emptied(
    mini: MiniTenant, tmp_path: Path
) -> None:
    bucket = open_blob_store(mini.storage_url)
    built = latest_table(mini.data_dir, "fashion", "text")
    assert built is not None and local_manifest(built) is not None  # the build published it
    store = VectorStore(tmp_path / "data", check_every=0, bucket=bucket)
    table = store.table("fashion")
    assert store.downloads == 1 and table.path.is_relative_to(tmp_path / "data" / "vectors")
    assert local_manifest(table.path) == local_manifest(built)
    original = VectorSearch(VectorStore(mini.data_dir)).neighbours("fashion", text="red dress", k=5)
    assert VectorSearch(store).neighbours("fashion", text="red dress", k=5) == original
    store.table("fashion")
    assert store.downloads == 1  # found locally on the next check

    shutil.rmtree(tmp_path / "data")  # the local disk is a cache: delete it while serving
    again = store.table("fashion")
    assert store.downloads == 2 and (again.path / "BUILT").exists()
    np.testing.assert_array_equal(again.hashes, table.hashes)


def test_tables_of_a_later_catalog_than_the_one_served_are_left_alone(
    mini: MiniTenant, tmp_path: Path
) -> None:
    bucket = open_blob_store(mini.storage_url)
    version = VectorStore(mini.data_dir).table("fashion").version
    earlier = VectorStore(tmp_path / "a", check_every=0, bucket=bucket, serving_version=lambda t: "v0")
    with pytest.raises(VectorIndexMissing):
        earlier.table("fashion")
    assert earlier.downloads == 0
    same = VectorStore(tmp_path / "b", check_every=0, bucket=bucket, serving_version=lambda t: version)
    assert same.table("fashion").version == version


def test_a_table_whose_manifest_is_not_written_is_not_published(mini: MiniTenant) -> None:
    scope = tenant_scope(open_blob_store(mini.storage_url), "fashion")
    before = newest_published(scope, "text")
    assert before is not None
    half = "vectors/text/v99990101T000000-abcdef-0123456789"  # a later catalog version, files only
    scope.put(f"{half}/u1/ids.json", b"[]")
    try:
        assert newest_published(scope, "text") == before
    finally:
        scope.delete(f"{half}/u1/ids.json")


def test_the_image_model_is_downloaded_not_exported(mini: MiniTenant, tmp_path: Path) -> None:
    require(mini.has_images, "the image extra is not installed: no image model was exported")
    bucket = open_blob_store(mini.storage_url)
    encoder = ImageEncoder.load(tmp_path, export=False, bucket=bucket)  # export=False: no torch used
    assert onnx_path(tmp_path).read_bytes() == onnx_path(mini.data_dir).read_bytes()
    from PIL import Image

    assert encoder.encode([Image.new("RGB", (224, 224))]).shape == (1, 1280)


def test_what_a_process_derives_beside_a_table_is_not_published(mini: MiniTenant, tmp_path: Path) -> None:
    from aisle.vectors.published import publish_table
    from aisle.vectors.table import VectorTable

    built = latest_table(mini.data_dir, "fashion", "text")
    assert built is not None
    table = Path(shutil.copytree(built, tmp_path / "vectors" / built.name))  # the fixture's stays as it is
    VectorTable.load(table)  # maps its ids from ids-<digest>/, written beside ids.json under a lock file
    assert list(table.glob("ids-*")) and (table / ".ids.lock").exists()
    manifest = publish_table(
        tenant_scope(open_blob_store(f"file://{tmp_path / 'bucket'}"), "fashion"), "text", table
    )
    assert "ids.json" in manifest.files
    assert not [f for f in manifest.files if f.startswith(("ids-", "."))]
