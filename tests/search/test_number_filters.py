"""A filter on a list of numbers (:func:`aisle.search.query.filters.filter_clause`, a term set over the
indexed field) matches exactly what a range of each value matches."""

from __future__ import annotations

from pathlib import Path

from tests.support.product_shop import TENANT, shop

from aisle.catalog.writer import CatalogWriter
from aisle.core.storage import open_blob_store
from aisle.search.indexes import IndexRegistry
from aisle.search.model import FilterSpec
from aisle.search.query.filters import filter_clause


def test_a_list_of_numbers_filters_to_exactly_those_values(tmp_path: Path) -> None:
    """A number filter's values (a term set over the indexed field) match what a range of each
    matches, on the version's rows and on rows the change log wrote."""
    tenants = shop(open_blob_store(f"file://{tmp_path / 'bucket'}"), tmp_path)
    registry = IndexRegistry(tenants, tmp_path / "data", check_every=3600, live_dirs=[tmp_path / "live"])
    writer = CatalogWriter(tenants)
    registry.get(TENANT)
    writer.patch(TENANT, "2", {"price": 7.25, "stock": 5})
    registry.follow(TENANT)
    index = registry.get(TENANT)

    def ids(spec: FilterSpec) -> list[str]:
        hits = index.searcher.search(filter_clause(index, spec)[0], 10).hits
        return sorted(index.rows[o]["id"] for o in index.ords(hits))

    assert ids(FilterSpec(field="price", value=[49.5, 7.25, 1000])) == ["1", "2"]
    assert ids(FilterSpec(field="price", value=[9])) == ["3"]
    assert ids(FilterSpec(field="price", value=[20])) == []  # product 2's price before the patch
    for value in (49.5, 7.25, 9):
        ranged = ids(FilterSpec(field="price", value={"gte": value, "lte": value}))
        assert ids(FilterSpec(field="price", value=[value])) == ranged
    registry.close()
