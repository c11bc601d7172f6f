"""A tiny tenant for the product API's tests (``from tests.support.product_shop import shop``): three
products imported from a CSV, with text, keyword, number, integer and boolean attributes."""

from __future__ import annotations

from pathlib import Path

from aisle.catalog.datasets.common import tenant_files
from aisle.catalog.importer import import_catalog
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import Attribute, AttributeConfiguration, GlobalConfiguration

TENANT = "shop"
CATALOG = """sku,name,maker,cost,stock,active
1,Red Running Shoe,Nike,49.5,3,true
2,Blue Shirt,Puma,20,0,false
3,Green Cap,Puma,9,12,yes
"""


def attributes() -> AttributeConfiguration:
    """``title`` (searchable), ``brand`` (facet), ``price`` (number), ``stock`` (integer), ``active``."""
    return AttributeConfiguration(
        id_source="sku",
        attributes=[
            Attribute(name="title", type="text", source="name", role="title", searchable=True),
            Attribute(name="brand", source="maker", role="brand", filterable=True, facetable=True),
            Attribute(name="price", type="number", source="cost", role="price", filterable=True),
            Attribute(name="stock", type="integer"),
            Attribute(name="active", type="boolean"),
        ],
    )


def shop(store: BlobStore, tmp_path: Path, *, imported: bool = True) -> Tenants:
    """Tenant ``shop`` on ``store``, with the three products of :data:`CATALOG` as its catalog."""
    tenants = Tenants(store, ttl=0)
    tenants.write_config(TENANT, tenant_files(attributes(), GlobalConfiguration()))
    if imported:
        source = tmp_path / "shop.csv"
        source.write_text(CATALOG)
        import_catalog(tenants, TENANT, source)
    return tenants
