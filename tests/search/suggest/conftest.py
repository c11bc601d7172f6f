"""A tiny grocery tenant (``default``) for suggestion tests that change the configuration."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from aisle.catalog.datasets.common import tenant_files
from aisle.catalog.importer import import_catalog
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import Attribute, AttributeConfiguration, GlobalConfiguration
from aisle.search.indexes import IndexRegistry

GROCERY = """id,title,brand,dept,aisle
1,Organic Whole Milk 1 gal,Horizon,Dairy,Milk
2,Organic Reduced Fat Milk,Horizon,Dairy,Milk
3,Whole Milk Greek Yogurt,Fage,Dairy,Yogurt
4,Nonfat Greek Yogurt Plain,Fage,Dairy,Yogurt
5,Honey Nut Cheerios Cereal,General Mills,Pantry,Cereal
6,Cheerios Original Cereal,General Mills,Pantry,Cereal
7,Natural Creamy Peanut Butter,Jif,Pantry,Spreads
8,Extra Crunchy Peanut Butter,Jif,Pantry,Spreads
9,Nutella Hazelnut Spread,Nutella,Pantry,Spreads
10,Honeycrisp Apples 3 lb bag,Fresh Farms,Produce,Fruit
"""


@dataclass
class Grocery:
    tenants: Tenants
    indexes: IndexRegistry
    data_dir: Path


@pytest.fixture
def grocery(blob_store: BlobStore, tmp_path: Path) -> Grocery:
    """The ``default`` tenant with 10 grocery products (brand, dept > aisle categories)."""
    tenants = Tenants(blob_store, ttl=0)
    attrs = AttributeConfiguration(
        attributes=[
            Attribute(name="title", type="text", role="title", searchable=True, weight=2.0),
            Attribute(name="brand", role="brand", searchable=True, filterable=True, facetable=True),
            Attribute(
                name="category",
                type="category_path",
                role="category",
                source=["dept", "aisle"],
                searchable=True,
                filterable=True,
            ),
        ]
    )
    tenants.write_config("default", tenant_files(attrs, GlobalConfiguration()))
    source = tmp_path / "grocery.csv"
    source.write_text(GROCERY)
    import_catalog(tenants, "default", source)
    return Grocery(tenants, IndexRegistry(tenants, tmp_path / "data"), tmp_path / "data")
