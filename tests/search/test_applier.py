"""The change log written into a followed index by the search process's applier child
(:mod:`aisle.search.index.applier`): the same snapshots as the thread writing it, one child for every
index of the process, a child that died replaced (nothing acknowledged lost), and the copies gone with
the child."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.support.product_shop import TENANT, shop

from aisle.catalog.writer import CatalogWriter
from aisle.core.storage import open_blob_store
from aisle.search.index.applier import NICE, Applier
from aisle.search.index.reader import TenantIndex
from aisle.search.indexes import IndexRegistry
from aisle.search.model import FilterSpec
from aisle.search.query.filters import filter_clause


def setup(tmp_path: Path, *, process: bool) -> tuple[IndexRegistry, CatalogWriter]:
    url = f"file://{tmp_path / 'bucket'}"
    tenants = shop(open_blob_store(url), tmp_path)
    registry = IndexRegistry(
        tenants,
        tmp_path / "data",
        check_every=3600,
        live_dirs=[tmp_path / "live"],
        applier=Applier(url) if process else None,
    )
    return registry, CatalogWriter(tenants)


def written(tmp_path: Path) -> tuple[IndexRegistry, CatalogWriter, subprocess.Popen[bytes]]:
    """A process-mode registry whose index has applied one write, and its applier child."""
    registry, writer = setup(tmp_path, process=True)
    registry.get(TENANT)
    writer.patch(TENANT, "1", {"price": 7})
    registry.follow(TENANT)
    assert registry.applier is not None and registry.applier._proc is not None
    return registry, writer, registry.applier._proc


def writes(writer: CatalogWriter) -> None:
    writer.upsert(TENANT, "4", {"title": "Yellow Running Shoe", "brand": "ASICS", "price": 80})
    writer.patch(TENANT, "1", {"price": 5})
    writer.delete(TENANT, "2")
    writer.patch(TENANT, "3", {"title": "Green Cap Deluxe", "brand": "Reebok"})


def served(index: TenantIndex) -> dict[str, object]:
    """What a search of ``index`` can see: rows by product, the words, keyword values and filter hits."""
    brand = filter_clause(index, FilterSpec(field="brand", value="reebok"))[0]
    return {
        "rows": {pid: index.rows[row] for pid, row in index.ord_by_id.items()},
        "ids": list(index.ids),
        "docs": index.num_docs(),
        "sequence": index.sequence,
        "keywords": index.keyword_values,
        "reebok": [index.rows[o]["id"] for o in index.ords(index.searcher.search(brand, 10).hits)],
        "deluxe": index.speller.vocabulary.get("deluxe"),
        "titles": [list(column) for column in index.searchable],
    }


def test_the_child_serves_what_the_thread_serves(tmp_path: Path) -> None:
    got = {}
    for process in (False, True):
        registry, writer = setup(tmp_path / str(process), process=process)
        registry.get(TENANT)
        writes(writer)
        assert registry.follow(TENANT) == 4
        got[process] = served(registry.get(TENANT))
        registry.close()
    assert got[True] == got[False]
    assert got[True]["reebok"] == ["3"] and got[True]["docs"] == 3 and got[True]["sequence"] == 4


def test_one_child_writes_every_index_and_removes_its_copies(tmp_path: Path) -> None:
    registry, _, proc = written(tmp_path)
    child = proc.pid
    copies = list((tmp_path / "live" / TENANT).iterdir())
    assert len(copies) == 1 and f"-{child}-" in copies[0].name  # the child made (and owns) the copy
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    assert os.getpriority(os.PRIO_PROCESS, child) == min(19, mine + NICE)  # yields the cores to searches
    index = registry.get(TENANT)
    assert index.rows[index.ord_by_id["1"]]["price"] == 7
    registry.close()
    assert not copies[0].exists()
    assert not Path(f"/proc/{child}").exists() or "zombie" in Path(f"/proc/{child}/status").read_text()


def test_a_child_that_died_is_replaced_and_loses_nothing(tmp_path: Path) -> None:
    registry, writer, proc = written(tmp_path)
    first = proc.pid
    os.kill(first, signal.SIGKILL)
    proc.wait()
    writer.patch(TENANT, "3", {"price": 11})
    registry.follow(TENANT)  # fails: the index is opened again at the next request, on a new child
    deadline = time.monotonic() + 10
    index = registry.get(TENANT)
    while index.sequence < 2 and time.monotonic() < deadline:
        registry.follow(TENANT)
        index = registry.get(TENANT)
    assert index.sequence == 2
    assert index.rows[index.ord_by_id["1"]]["price"] == 7 and index.rows[index.ord_by_id["3"]]["price"] == 11
    assert registry.applier._proc.pid != first
    registry.close()


def test_a_child_stopped_by_sigterm_removes_its_copies(tmp_path: Path) -> None:
    """``aisle serve`` stops its process group: the child gets SIGTERM too, and leaves no copy."""
    registry, _, child = written(tmp_path)
    [copy] = list((tmp_path / "live" / TENANT).iterdir())
    child.send_signal(signal.SIGTERM)
    assert child.wait(timeout=60) == 0  # 10 s ran out once with three test workers on two cores
    assert not copy.exists()
    registry.close()
