"""The vector write log in the bucket: two stores (two replicas' data dirs) on one bucket serve the same
writes, in the log's order, once each; a published table supersedes the writes before it; a torn write
is never applied; folding keeps the log short without changing what any replica serves.

Small synthetic tables (16 products, 8 dimensions, a real usearch index) on a local bucket: no encoder.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pytest

from aisle.core.storage import BlobStore, open_blob_store
from aisle.core.tenancy import tenant_scope
from aisle.vectors.published import publish_table
from aisle.vectors.store import VectorStore
from aisle.vectors.table import VectorTable, table_dir, write_table
from aisle.vectors.writes import Delta, WriteLog, apply_delta

TENANT = "wlog"
DIM = 8
N = 16
SELF = 5e-4  # a stored vector's cosine with itself: 1 within half precision (ann_usearch.STORED)


def unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def publish(bucket: BlobStore, root: Path, version: str, *, writes: int | None = None) -> Path:
    """A table of products p0..p15 for catalog ``version``, built in ``root`` and published."""
    ids = [f"p{i}" for i in range(N)]
    vectors = np.stack([unit(i) for i in range(N)])
    path = write_table(table_dir(root, TENANT, "text", version, "r"), version, ids, vectors, np.zeros(N))
    publish_table(tenant_scope(bucket, TENANT), "text", path, writes=writes)
    return path


@pytest.fixture
def bucket(tmp_path: Path) -> BlobStore:
    store = open_blob_store(f"file://{tmp_path / 'bucket'}")
    publish(store, tmp_path / "builder", "v1")
    return store


def replica(bucket: BlobStore, root: Path) -> VectorStore:
    """A serving store with its own empty data dir that looks at the bucket on every call."""
    return VectorStore(root, check_every=0, bucket=bucket)


def nearest(store: VectorStore, vector: np.ndarray) -> tuple[str | None, float]:
    ids, scores = store.search(TENANT, vector, 1)
    return (ids[0], float(scores[0])) if ids else (None, 0.0)


def log_of(bucket: BlobStore) -> WriteLog:
    return WriteLog(tenant_scope(bucket, TENANT), "text")


def test_a_write_through_one_store_is_served_by_another(bucket: BlobStore, tmp_path: Path) -> None:
    a, b = replica(bucket, tmp_path / "a"), replica(bucket, tmp_path / "b")
    assert nearest(b, unit(100))[0] != "x"
    assert a.upsert(TENANT, ["x"], unit(100)[None, :] * 3) == 1  # stored unit length
    assert nearest(a, unit(100)) == ("x", pytest.approx(1.0, abs=SELF))  # the writer at once
    assert "x" not in VectorTable.load(a.table(TENANT).path).key_of  # its files stay the published ones
    assert nearest(b, unit(100)) == ("x", pytest.approx(1.0, abs=SELF))  # the other at its check
    assert b.delete(TENANT, ["x", "never-there"]) == 1
    assert nearest(a, unit(100))[0] != "x"
    assert len(a.table(TENANT)) == len(b.table(TENANT)) == N
    # a store started later reads the writes from the log: the upsert and the delete
    c = replica(bucket, tmp_path / "c")
    assert nearest(c, unit(100))[0] != "x" and len(c.table(TENANT)) == N


def test_entries_apply_in_log_order_delete_after_upsert_and_upsert_after_delete(
    bucket: BlobStore, tmp_path: Path
) -> None:
    log = log_of(bucket)
    first = log.append(Delta(upsert=["x"], vectors=unit(1)[None, :]))
    second = log.append(Delta(upsert=["x"], vectors=unit(2)[None, :]))  # replaces x
    third = log.append(Delta(upsert=["y"], vectors=unit(3)[None, :]))
    fourth = log.append(Delta(delete=["y", "p5"]))
    assert [first, second, third, fourth] == [1, 2, 3, 4] == log.sequence()
    store = replica(bucket, tmp_path / "r")
    table = store.table(TENANT)
    assert table.applied == 4
    assert nearest(store, unit(2)) == ("x", pytest.approx(1.0, abs=SELF))
    assert "y" not in table.key_of and "p5" not in table.key_of and "x" in table.key_of
    log.append(Delta(upsert=["y"], vectors=unit(4)[None, :]))  # back after its delete
    assert nearest(store, unit(4)) == ("y", pytest.approx(1.0, abs=SELF))


def test_applying_an_entry_again_changes_nothing(bucket: BlobStore, tmp_path: Path) -> None:
    store = replica(bucket, tmp_path / "r")
    table = store.table(TENANT)
    delta = Delta(upsert=["x", "p1"], vectors=np.stack([unit(7), unit(8)]), delete=["p2"], seq=1)
    assert apply_delta(table, delta)
    once = (list(table.ids), dict(table.key_of), table.ann.search(unit(7), 5, None).keys.tolist())
    assert apply_delta(table, delta)
    assert (list(table.ids), dict(table.key_of), table.ann.search(unit(7), 5, None).keys.tolist()) == once
    other = Delta(upsert=["z"], vectors=np.ones((1, DIM + 1), dtype=np.float32), seq=2)
    assert not apply_delta(table, other) and "z" not in table.key_of  # another encoder's dimension
    # a store applies each entry once: a check that finds nothing new changes nothing
    log_of(bucket).append(Delta(upsert=["w"], vectors=unit(9)[None, :]))
    generation = store.table(TENANT).generation
    store.table(TENANT)
    assert store.table(TENANT).generation == generation


def test_a_newly_published_table_supersedes_the_writes_before_it(bucket: BlobStore, tmp_path: Path) -> None:
    writer = replica(bucket, tmp_path / "w")
    writer.upsert(TENANT, ["old"], unit(50)[None, :])
    writer.upsert(TENANT, ["older"], unit(51)[None, :])
    publish(bucket, tmp_path / "builder", "v2")  # a build started after both writes
    serving = replica(bucket, tmp_path / "s")
    table = serving.table(TENANT)
    assert table.version == "v2" and table.base == 2
    assert "old" not in table.key_of and "older" not in table.key_of
    assert log_of(bucket).sequence() == [2]  # pruned; the last entry kept, so numbers only grow
    writer.upsert(TENANT, ["new"], unit(52)[None, :])
    assert nearest(serving, unit(52))[0] == "new"
    assert nearest(writer, unit(52))[0] == "new"  # the writer moved to v2 too
    assert writer.table(TENANT).version == "v2" and "old" not in writer.table(TENANT).key_of
    # a build that started before the last write supersedes only the writes before it started
    writer.upsert(TENANT, ["during"], unit(53)[None, :])  # seq 4, while a build (from seq 3) runs
    publish(bucket, tmp_path / "builder", "v3", writes=3)
    later = replica(bucket, tmp_path / "l")
    assert later.table(TENANT).version == "v3"
    assert nearest(later, unit(53))[0] == "during" and nearest(later, unit(52))[0] != "new"


def test_a_torn_write_is_never_applied(bucket: BlobStore, tmp_path: Path) -> None:
    scope, log = tenant_scope(bucket, TENANT), log_of(bucket)
    # vectors uploaded, entry never written (the writer died between the two)
    scope.put("vector-writes/text/data/orphan.f32", unit(60).tobytes())
    # an entry whose vectors were cut short, and one whose vectors were overwritten (same size)
    seq = log.append(Delta(upsert=["cut"], vectors=unit(61)[None, :]))
    assert log.append(Delta(upsert=["changed"], vectors=unit(63)[None, :])) == seq + 1
    for n, data in ((seq, unit(61).tobytes()[:-4]), (seq + 1, unit(64).tobytes())):
        entry = orjson.loads(scope.get(f"vector-writes/text/log/{n:012d}.json"))
        scope.put(entry["data"], data)
    # an entry cut short itself, then a good one after them
    scope.put(f"vector-writes/text/log/{seq + 2:012d}.json", b'{"seq": 3, "upsert": ["half"')
    assert log.append(Delta(upsert=["good"], vectors=unit(62)[None, :])) == seq + 3
    store = replica(bucket, tmp_path / "r")
    table = store.table(TENANT)
    assert not {"cut", "changed", "half"} & set(table.key_of) and "good" in table.key_of
    assert len(table) == N + 1 and table.applied == seq + 3


def test_folding_the_log_changes_what_no_replica_serves(bucket: BlobStore, tmp_path: Path) -> None:
    writer = replica(bucket, tmp_path / "w")
    writer.fold_after = 4
    early = replica(bucket, tmp_path / "e")
    writer.upsert(TENANT, ["a", "b"], np.stack([unit(70), unit(71)]))
    writer.upsert(TENANT, ["c"], unit(72)[None, :])
    early.table(TENANT)  # applied the first two entries, not the rest
    writer.delete(TENANT, ["b", "p0"])
    writer.upsert(TENANT, ["a"], unit(73)[None, :])
    writer.upsert(TENANT, ["b"], unit(74)[None, :])  # the fifth live entry: folded into this one
    assert log_of(bucket).sequence() == [5]
    fresh = replica(bucket, tmp_path / "f")
    for store in (writer, early, fresh):
        table = store.table(TENANT)
        assert sorted(p for p in table.key_of if not p.startswith("p")) == ["a", "b", "c"], store.data_dir
        assert "p0" not in table.key_of and len(table) == N + 2
        assert nearest(store, unit(73)) == ("a", pytest.approx(1.0, abs=SELF))
        assert nearest(store, unit(74)) == ("b", pytest.approx(1.0, abs=SELF))
    writer.upsert(TENANT, ["d"], unit(75)[None, :])  # numbers go on after a fold
    assert log_of(bucket).sequence() == [5, 6] and nearest(fresh, unit(75))[0] == "d"


def test_without_a_bucket_a_write_changes_the_local_table(tmp_path: Path) -> None:
    ids = [f"p{i}" for i in range(N)]
    path = table_dir(tmp_path, TENANT, "text", "v1", "r")
    write_table(path, "v1", ids, np.stack([unit(i) for i in range(N)]), np.zeros(N))
    VectorStore(tmp_path, check_every=0).upsert(TENANT, ["x"], unit(90)[None, :])
    assert "x" in VectorTable.load(path).key_of  # saved in the table's files
