# mypy: disable-error-code="arg-type, call-arg"
# (pydantic validates the string values of these literal configurations into their enums and aliases)
"""YooChoose 100k-click sample: its items become products so the session model can be served.

The data has item ids only, so titles are ``Item <id>``; there are no prices or categories.
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
        attributes=[
            Attribute(name="title", type="text", role="title", searchable=True),
            Attribute(name="views", type="integer", filterable=True, sortable=True),
        ]
    )
    return tenant_files(attrs, GlobalConfiguration(display_name="YooChoose sessions", currency="EUR"))


def prepare(data_dir: Path | None, workdir: Path) -> Path | None:
    if data_dir is None:
        return None
    files = sorted((data_dir / "yoochoose").glob("yoochoose-clicks-100k_*.txt"))
    if not files:
        return None
    clicks = pl.concat([pl.read_csv(f, separator="\t", schema_overrides={"ItemId": pl.Utf8}) for f in files])
    items = (
        clicks.group_by("ItemId")
        .agg(pl.len().alias("views"))
        .sort("ItemId")
        .select(pl.col("ItemId").alias("id"), (pl.lit("Item ") + pl.col("ItemId")).alias("title"), "views")
    )
    path = workdir / "yoochoose_items.parquet"
    items.write_parquet(path)
    return path


DATASET = DemoDataset("yoochoose", "YooChoose items (session-model demo)", configs, prepare)
