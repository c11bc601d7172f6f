# mypy: disable-error-code="arg-type, call-arg"
# (pydantic validates the string values of these literal configurations into their enums and aliases)
"""Myntra fashion catalog: ``fashion/products.jsonl.gz`` (44,441 products, prices in INR)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from aisle.catalog.datasets import DemoDataset
from aisle.catalog.datasets.common import tenant_files
from aisle.core.tenant_config import (
    Attribute,
    AttributeConfiguration,
    FollowUpConfig,
    GlobalConfiguration,
    Synonym,
)


def configs() -> dict[str, BaseModel]:
    attrs = AttributeConfiguration(
        attributes=[
            Attribute(name="title", type="text", source="name", role="title", searchable=True, weight=3.0),
            Attribute(
                name="brand",
                source="brand",
                role="brand",
                searchable=True,
                weight=2.0,
                filterable=True,
                facetable=True,
                sortable=True,
            ),
            Attribute(
                name="price",
                type="number",
                source="price",
                role="price",
                filterable=True,
                facetable=True,
                sortable=True,
            ),
            Attribute(name="discounted_price", type="number", filterable=True, sortable=True),
            Attribute(
                name="color",
                source="colour",
                role="color",
                searchable=True,
                weight=1.5,
                filterable=True,
                facetable=True,
                question="Which colour?",
            ),
            Attribute(
                name="gender",
                role="gender",
                searchable=True,
                weight=1.0,
                filterable=True,
                facetable=True,
                question="Who is it for?",
            ),
            Attribute(
                name="category",
                type="category_path",
                role="category",
                source=["master_category", "sub_category", "article_type"],
                searchable=True,
                weight=1.0,
                filterable=True,
                facetable=True,
            ),
            Attribute(
                name="article_type",
                searchable=True,
                weight=2.0,
                filterable=True,
                facetable=True,
                extract=True,
                question="Which kind?",
            ),
            Attribute(name="season", filterable=True, facetable=True, question="For which season?"),
            Attribute(
                name="usage",
                searchable=True,
                weight=0.5,
                filterable=True,
                facetable=True,
                question="What is it for?",
            ),
            Attribute(name="year", type="integer", filterable=True, facetable=True, sortable=True),
            # Descriptions are not searched: they mention what goes with the product ("team it with
            # running shoes"), which made jerseys match shoe queries.
            Attribute(
                name="description", type="text", source="description_html", role="description", html=True
            ),
        ]
    )
    global_ = GlobalConfiguration(
        display_name="Fashion (Myntra)",
        currency="INR",
        # guided search: a query matching 40+ products over several colours, brands... asks one question
        follow_up=FollowUpConfig(enabled=True),
        synonyms=[
            Synonym(terms=["tshirt", "t-shirt", "tee"]),
            Synonym(terms=["sneakers", "sports shoes"]),
            Synonym(from_="trainers", to=["sports shoes"]),
            Synonym(terms=["spectacles", "eyewear"]),
        ],
    )
    return tenant_files(attrs, global_)


def prepare(data_dir: Path | None, workdir: Path) -> Path | None:
    if data_dir is None:
        return None
    path = data_dir / "fashion" / "products.jsonl.gz"
    return path if path.exists() else None


DATASET = DemoDataset("fashion", "Myntra fashion catalog (44,441 products)", configs, prepare)
