# mypy: disable-error-code="arg-type, call-arg"
# (pydantic validates the string values of these literal configurations into their enums and aliases)
"""Home Depot product search relevance catalog: ``homedepot/products.csv`` (id, title)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from aisle.catalog.datasets import DemoDataset
from aisle.catalog.datasets.common import tenant_files
from aisle.core.tenant_config import Attribute, AttributeConfiguration, GlobalConfiguration


def configs() -> dict[str, BaseModel]:
    attrs = AttributeConfiguration(
        attributes=[
            Attribute(name="title", type="text", role="title", searchable=True, weight=1.0, html=True)
        ]
    )
    return tenant_files(attrs, GlobalConfiguration(display_name="Home Depot", currency="USD"))


def prepare(data_dir: Path | None, workdir: Path) -> Path | None:
    if data_dir is None:
        return None
    path = data_dir / "homedepot" / "products.csv"
    return path if path.exists() else None


DATASET = DemoDataset("homedepot", "Home Depot catalog (54,667 products, titles only)", configs, prepare)
