"""Builds in a child process (issue 42): the search process maps what the child wrote and never reads
the catalog itself; a failed child leaves the build to the process."""

from __future__ import annotations

from pathlib import Path

import pytest

from aisle.catalog.datasets.common import tenant_files
from aisle.catalog.importer import import_catalog
from aisle.catalog.store import CatalogStore
from aisle.core.errors import AisleError
from aisle.core.mapped import MappedStrings
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import Attribute, AttributeConfiguration, GlobalConfiguration
from aisle.search.child_builds import ChildBuilds
from aisle.search.indexes import IndexRegistry
from aisle.search.suggest.registry import SuggesterRegistry
from aisle.search.suggest.suggester import Suggester

SHOP = """id,title,brand
d1,Cordless Drill 18V,Acme
d2,Hand Saw,Bolt
d3,Claw Hammer,Bolt
d4,Drill Bit Set,Acme
"""
ATTRIBUTES = AttributeConfiguration(
    attributes=[
        Attribute(name="title", type="text", role="title", searchable=True),
        Attribute(name="brand", role="brand", searchable=True, filterable=True, facetable=True),
    ]
)


@pytest.fixture
def shop(tmp_path: Path) -> tuple[Tenants, str]:
    from aisle.core.storage import open_blob_store

    url = f"file://{tmp_path / 'bucket'}"
    tenants = Tenants(open_blob_store(url), ttl=0)
    tenants.write_config("shop", tenant_files(ATTRIBUTES, GlobalConfiguration()))
    (tmp_path / "shop.csv").write_text(SHOP)
    import_catalog(tenants, "shop", tmp_path / "shop.csv")
    return tenants, url


def _no_catalog_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    monkeypatch.setattr(CatalogStore, "load", lambda self, version=None: reads.append(str(version)) or 1 / 0)
    return reads


def test_a_child_builds_what_the_worker_then_maps(
    shop: tuple[Tenants, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenants, url = shop
    data = tmp_path / "data"
    builds = ChildBuilds(url, data)
    reads = _no_catalog_reads(monkeypatch)  # in this process only: the children read it
    indexes = IndexRegistry(tenants, data, builds=builds)
    index = indexes.get("shop")
    assert reads == [] and isinstance(index.ids, MappedStrings)
    hits = index.searcher.search(index.index.parse_query("drill", ["s_title"]), 10).hits
    assert sorted(index.ids[o] for o in index.ords(hits)) == ["d1", "d4"]
    built: list[int] = []
    monkeypatch.setattr(Suggester, "__init__", lambda *a, **k: built.append(1))  # never built here
    suggester = SuggesterRegistry(tenants, indexes, builds=builds).get("shop")
    assert built == [] and reads == []
    assert {s.suggestion for s in suggester.suggest("dri")} >= {"Cordless Drill 18V", "Drill Bit Set"}
    assert len(list((data / "suggest" / "shop").glob("*.tables"))) == 1


def test_a_failed_child_leaves_the_build_to_the_process(shop: tuple[Tenants, str], tmp_path: Path) -> None:
    tenants, _ = shop
    data = tmp_path / "data"
    builds = ChildBuilds(f"file://{tmp_path / 'elsewhere'}", data)  # a bucket without the tenant
    with pytest.raises(AisleError) as refused:
        builds.index("shop", "v-none", ATTRIBUTES)
    assert refused.value.status == 404 and refused.value.code == "catalog_not_found"  # the child's, kept
    index = IndexRegistry(tenants, data, builds=builds).get("shop")
    assert index.num_docs() == 4
    suggester = SuggesterRegistry(tenants, IndexRegistry(tenants, data), builds=builds).get("shop")
    assert suggester.suggest("ham")[0].suggestion == "Claw Hammer"
