"""Text vectors follow product writes (aisle.vectors.catalog_follow): a new product or a changed text is
embedded, a price change is not, a deleted product's vector goes, and a process started later goes on
from the cursor in the bucket.

A small synthetic table (8 dimensions, a real usearch index) on a local bucket, and an encoder that
maps a text to a fixed unit vector of its own (no MiniLM): what is asserted is which texts were embedded
and what the store serves afterwards.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from tests.support.recs import write_tenant
from tests.support.waiting import wait_until

from aisle.catalog.changes import ChangeLog
from aisle.catalog.compaction import compact
from aisle.catalog.store import CatalogStore
from aisle.catalog.writer import CatalogWriter
from aisle.core.storage import BlobStore, open_blob_store
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import Attribute, AttributeRole, AttributeType
from aisle.vectors.catalog_follow import CatalogEmbedder
from aisle.vectors.published import publish_table
from aisle.vectors.store import VectorStore
from aisle.vectors.table import table_dir, write_table

TENANT = "follow"
DIM = 8
SELF = 5e-4  # a stored vector's cosine with itself: 1 within half precision
ATTRIBUTES = [
    Attribute(name="title", type=AttributeType.text, role=AttributeRole.title, searchable=True),
    Attribute(name="brand", role=AttributeRole.brand, searchable=True, filterable=True),
    Attribute(name="price", type=AttributeType.number, role=AttributeRole.price, sortable=True),
]


def unit(text: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


class Encoder:
    """Texts to their fixed unit vectors; remembers every text it was asked to embed."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        return np.stack([unit(t) for t in texts])


@pytest.fixture
def bucket(tmp_path: Path) -> BlobStore:
    """The tenant (4 products) and its text table, built elsewhere and published."""
    store = open_blob_store(f"file://{tmp_path / 'bucket'}")
    products = pl.DataFrame(
        {
            "id": ["p0", "p1", "p2", "p3"],
            "title": ["red shoe", "blue shirt", "green hat", "black bag"],
            "brand": ["nike", "puma", "nike", "puma"],
            "price": [10.0, 20.0, 30.0, 40.0],
        }
    )
    write_tenant(store, TENANT, products, attributes=ATTRIBUTES)
    scope = Tenants(store).scope(TENANT)
    version = CatalogStore(scope).current_version()
    assert version is not None
    texts = [f"{t}. {b}" for t, b in zip(products["title"], products["brand"], strict=True)]
    path = table_dir(tmp_path / "builder", TENANT, "text", version, "r")
    write_table(path, version, products["id"].to_list(), np.stack([unit(t) for t in texts]), np.zeros(4))
    publish_table(scope, "text", path)
    return store


def embedder(
    bucket: BlobStore, root: Path, encoder: Encoder, rebuilt: list[str] | None = None
) -> CatalogEmbedder:
    """An embedder in a process of its own (``root``: its data dir); ``rebuilt`` collects rebuilds."""
    store = VectorStore(root, check_every=0, bucket=bucket)
    calls: list[str] = rebuilt if rebuilt is not None else []
    return CatalogEmbedder(Tenants(bucket, ttl=0), store, encoder, rebuild=calls.append)


def nearest(store: VectorStore, text: str) -> tuple[str | None, float]:
    ids, scores = store.search(TENANT, unit(text), 1)
    return (ids[0], float(scores[0])) if ids else (None, 0.0)


def test_writes_are_embedded_once_and_only_when_their_text_changes(bucket: BlobStore, tmp_path: Path) -> None:
    writer = CatalogWriter(Tenants(bucket, ttl=0))
    encoder = Encoder()
    follow = embedder(bucket, tmp_path / "a", encoder)
    assert follow.catch_up(TENANT).embedded == 0 and encoder.texts == []  # nothing written yet

    writer.upsert(TENANT, "p9", {"title": "violet trail runner", "brand": "asics", "price": 99.0})
    writer.patch(TENANT, "p1", {"title": "blue linen shirt"})
    writer.patch(TENANT, "p2", {"price": 31.0})  # not a text field: nothing to embed
    writer.delete(TENANT, "p3")
    done = follow.catch_up(TENANT)
    assert (done.embedded, done.deleted) == (2, 1)
    assert sorted(encoder.texts) == ["blue linen shirt. puma", "violet trail runner. asics"]
    store = VectorStore(tmp_path / "reader", check_every=0, bucket=bucket)  # another replica
    assert nearest(store, "violet trail runner. asics") == ("p9", pytest.approx(1.0, abs=SELF))
    assert nearest(store, "blue linen shirt. puma") == ("p1", pytest.approx(1.0, abs=SELF))
    assert nearest(store, "black bag. puma")[0] != "p3"  # its vector went with it
    assert len(store.table(TENANT)) == 4  # p0, p1, p2, p9

    assert follow.catch_up(TENANT).embedded == 0  # followed: nothing twice
    again = Encoder()  # a process started later reads the cursor in the bucket
    assert embedder(bucket, tmp_path / "b", again).catch_up(TENANT).sequence == done.sequence
    assert again.texts == []


def test_a_product_written_twice_is_embedded_from_its_last_text(bucket: BlobStore, tmp_path: Path) -> None:
    writer = CatalogWriter(Tenants(bucket, ttl=0))
    writer.upsert(TENANT, "p9", {"title": "first name", "brand": "asics"})
    writer.patch(TENANT, "p9", {"title": "second name"})
    encoder = Encoder()
    embedder(bucket, tmp_path / "a", encoder).catch_up(TENANT)
    assert encoder.texts == ["second name. asics"]


def test_a_cursor_behind_the_pruned_log_builds_the_table_anew(bucket: BlobStore, tmp_path: Path) -> None:
    tenants = Tenants(bucket, ttl=0)
    writer = CatalogWriter(tenants)
    encoder, rebuilt = Encoder(), []
    assert embedder(bucket, tmp_path / "a", encoder, rebuilt).catch_up(TENANT).sequence == 0  # cursor saved
    for i in range(2):  # two compactions: the second prunes the entry the first version included
        writer.upsert(TENANT, f"n{i}", {"title": f"new {i}", "brand": "nike"})
        assert compact(tenants, TENANT) is not None
    assert not ChangeLog(tenants.scope(TENANT)).exists(1)
    done = embedder(bucket, tmp_path / "b", encoder, rebuilt).catch_up(TENANT)
    assert done.rebuilt and rebuilt == [TENANT] and encoder.texts == []
    assert done.sequence == CatalogStore(tenants.scope(TENANT)).pointer().sequence == 2  # type: ignore[union-attr]


def test_a_table_older_than_the_catalog_builds_anew_then_follows(bucket: BlobStore, tmp_path: Path) -> None:
    """Writes folded into a new version before the tenant was ever followed: which products changed
    cannot be read, so the table is built for the current version; later writes are followed."""
    tenants = Tenants(bucket, ttl=0)
    writer = CatalogWriter(tenants)
    writer.upsert(TENANT, "n0", {"title": "new 0", "brand": "nike"})
    assert compact(tenants, TENANT) is not None
    encoder, rebuilt = Encoder(), []
    follow = embedder(bucket, tmp_path / "a", encoder, rebuilt)
    assert follow.catch_up(TENANT).rebuilt and rebuilt == [TENANT]
    writer.upsert(TENANT, "n1", {"title": "new 1", "brand": "puma"})
    assert follow.catch_up(TENANT).embedded == 1 and encoder.texts == ["new 1. puma"]


def test_a_round_with_the_bucket_down_is_logged_and_the_next_one_follows(
    bucket: BlobStore, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The background loop outlives a bucket outage: a failed round is a warning, not a dead thread."""
    from aisle.core.errors import StorageUnavailable

    class Flaky(Tenants):
        def __init__(self, failures: int) -> None:
            super().__init__(bucket, ttl=0)
            self.failures = failures

        def names(self) -> list[str]:
            if self.failures:
                self.failures -= 1
                raise StorageUnavailable("object storage failed to list ''; retry shortly")
            return super().names()

    CatalogWriter(Tenants(bucket, ttl=0)).upsert(TENANT, "p9", {"title": "violet", "brand": "asics"})
    encoder, stop = Encoder(), threading.Event()
    follow = CatalogEmbedder(
        Flaky(1), VectorStore(tmp_path / "a", check_every=0, bucket=bucket), encoder, print
    )
    thread = threading.Thread(target=follow.run, args=(stop, 0.0))
    thread.start()
    try:
        wait_until(lambda: encoder.texts == ["violet. asics"], "the round after the outage embeds the write")
    finally:
        stop.set()
        thread.join()
    assert "not followed this round" in caplog.text
