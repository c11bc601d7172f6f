"""The change log applied to an open index (:mod:`aisle.search.index.live`), through the registry's own
door (:meth:`IndexRegistry.follow`): snapshots are immutable (an older one keeps answering as it did),
the built index shared by the workers is never written, the ranker's token table grown by the new rows
equals one built from scratch, and a process's copy goes with it."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
from tests.support.product_shop import TENANT, shop

from aisle.catalog.writer import CatalogWriter
from aisle.core.storage import open_blob_store
from aisle.search.indexes import IndexRegistry
from aisle.search.model import FilterSpec
from aisle.search.query.filters import filter_clause
from aisle.search.ranking.doc_terms import DocTerms
from aisle.vectors.search import VectorSearch
from aisle.vectors.store import VectorStore
from aisle.vectors.table import VectorTable


def files_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.iterdir()):
        if path.is_file() and not path.name.endswith(".lock"):
            digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()


def setup(tmp_path: Path) -> tuple[IndexRegistry, CatalogWriter]:
    tenants = shop(open_blob_store(f"file://{tmp_path / 'bucket'}"), tmp_path)
    return IndexRegistry(
        tenants, tmp_path / "data", check_every=3600, live_dirs=[tmp_path / "live"]
    ), CatalogWriter(tenants)


def test_snapshots_are_immutable_and_the_built_index_untouched(tmp_path: Path) -> None:
    registry, writer = setup(tmp_path)
    before = registry.get(TENANT)
    built = next((tmp_path / "data" / "indexes" / TENANT).iterdir())
    digest = files_digest(built)
    writer.upsert(TENANT, "4", {"title": "Yellow Running Shoe", "brand": "ASICS", "price": 80})
    writer.patch(TENANT, "1", {"price": 5})
    writer.delete(TENANT, "2")
    assert registry.follow(TENANT) == 3
    after = registry.get(TENANT)
    assert (after.sequence, before.sequence) == (3, 0) and after.version == before.version
    assert len(after.rows) == 5 and len(before.rows) == 3  # products 4 and 1 took new rows
    assert (
        after.rows[after.ord_by_id["1"]]["price"] == 5 and before.rows[before.ord_by_id["1"]]["price"] == 49.5
    )
    assert "2" not in after.ord_by_id and "2" in before.ord_by_id and len(after.ord_by_id) == 3
    assert sorted(after.ord_by_id) == ["1", "3", "4"] and after.num_docs() == 3 and before.num_docs() == 3
    assert (
        after.keyword_values["brand"]["asics"] == ["ASICS"] and "asics" not in before.keyword_values["brand"]
    )
    asics = filter_clause(after, FilterSpec(field="brand", value="asics"))[0]
    assert [after.rows[o]["id"] for o in after.ords(after.searcher.search(asics, 10).hits)] == ["4"]
    assert files_digest(built) == digest  # the workers' shared index: never written
    registry.close()


def test_the_ranker_token_table_grows_to_what_a_build_gives(tmp_path: Path) -> None:
    registry, writer = setup(tmp_path)
    base = DocTerms.of(registry.get(TENANT))
    writer.upsert(TENANT, "4", {"title": "Yellow Zebra Shoe"})
    writer.patch(TENANT, "3", {"title": "Green Cap Deluxe"})
    registry.follow(TENANT)
    index = registry.get(TENANT)
    grown, scratch = DocTerms.of(index), DocTerms.build(index)
    assert base.n_docs == 3 and grown.n_docs == scratch.n_docs == 5
    assert grown.vocab == scratch.vocab and grown.words == scratch.words and grown.by_word == scratch.by_word
    for name in ("ptr", "ids", "df", "raw_ptr", "raw_ids", "distinct", "word_rank"):
        assert np.array_equal(getattr(grown, name), getattr(scratch, name)), name
    assert grown.avg_len == scratch.avg_len and "zebra" in grown.vocab and "zebra" not in base.vocab
    registry.close()


def test_a_process_copy_goes_with_it(tmp_path: Path) -> None:
    registry, writer = setup(tmp_path)
    registry.get(TENANT)
    writer.delete(TENANT, "3")
    registry.follow(TENANT)
    copies = list((tmp_path / "live" / TENANT).iterdir())
    assert len(copies) == 1
    registry.close()
    assert not copies[0].exists()


def test_copies_of_exited_processes_are_removed(tmp_path: Path) -> None:
    registry, _ = setup(tmp_path)
    exited = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    folder = tmp_path / "live" / TENANT
    dead = folder / f"v1-abc.{socket.gethostname()}-{int(exited.stdout)}-aaaaaa"
    mine = folder / f"v1-abc.{socket.gethostname()}-{os.getpid()}-bbbbbb"
    elsewhere = folder / f"v1-abc.another-host-{int(exited.stdout)}-cccccc"  # another host's process
    for path in (dead, mine, elsewhere):
        path.mkdir(parents=True)
    assert registry.remove_dead_copies() == 1
    assert not dead.exists() and mine.exists() and elsewhere.exists()


def test_vector_row_keys_grow_with_the_rows_and_skip_new_products(tmp_path: Path) -> None:
    """The hybrid stage's row -> vector key map: a changed product's new row keeps its vector, a product
    new since the version has none (-1) until the vectors are built again, and no row is left out."""
    registry, writer = setup(tmp_path)
    table = VectorTable(tmp_path / "table", "v", ["1", "2", "3"], np.zeros(3, dtype=np.uint64), None)  # type: ignore[arg-type]
    search = VectorSearch(VectorStore(tmp_path / "vectors"))
    before = registry.get(TENANT).catalog_rows()
    assert search.row_keys(table, before).tolist() == [0, 1, 2]
    writer.patch(TENANT, "1", {"price": 5})
    registry.follow(TENANT)
    assert search.row_keys(table, registry.get(TENANT).catalog_rows()).tolist() == [0, 1, 2, 0]
    writer.upsert(TENANT, "4", {"title": "Yellow Shoe"})
    registry.follow(TENANT)
    after = registry.get(TENANT).catalog_rows()
    assert search.row_keys(table, after).tolist() == [0, 1, 2, 0, -1]  # the map above, grown
    fresh = VectorSearch(VectorStore(tmp_path / "vectors")).row_keys(table, after)
    assert fresh.tolist() == [0, 1, 2, 0, -1]
    registry.close()
