"""Inferring a tenant's attribute configuration from a catalog file no demo uses (a wine shop, a bookshop)."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from tests.support.catalog_files import books_parquet, wine_csv, wine_rows

from aisle.catalog.inference import Inference, infer_attributes
from aisle.catalog.onboarding import read_catalog
from aisle.catalog.readers import read_csv
from aisle.catalog.schema import map_catalog
from aisle.core.errors import AisleError, BadRequest
from aisle.core.tenant_config import Attribute, AttributeConfiguration


def by_column(inference: Inference) -> dict[str, Attribute]:
    return {c.column: c.attribute for c in inference.columns if c.attribute is not None}


def summary(a: Attribute) -> tuple[str, str | None, str, bool, bool, bool, bool]:
    role = a.role.value if a.role is not None else None
    return (a.name, role, a.type.value, a.searchable, a.filterable, a.facetable, a.sortable)


def test_a_wine_shop_csv_gets_its_roles_types_and_facets() -> None:
    frame, _ = read_csv(wine_csv())
    inference = infer_attributes(frame)
    assert inference.configuration.id_source == "sku"
    assert [c.column for c in inference.columns] == list(wine_rows()[0])  # every column, in file order
    got = {column: summary(a) for column, a in by_column(inference).items()}
    #                name          role           type             search filter facet  sort
    assert got == {
        "name": ("title", "title", "text", True, False, False, False),
        "winery": ("brand", "brand", "keyword", True, True, True, False),
        "price": ("price", "price", "number", False, True, True, True),
        "colour": ("color", "color", "keyword", True, True, True, False),
        "category": ("category", "category", "category_path", True, True, True, False),
        "country": ("country", None, "keyword", True, True, True, False),
        "vintage": ("vintage", None, "integer", False, True, True, True),
        "organic": ("organic", None, "boolean", False, True, True, False),
        "rating": ("rating", None, "number", False, True, False, True),
        "description": ("description", "description", "text", False, False, False, False),
        "image_url": ("image", "image", "keyword", False, False, False, False),
        "ean": ("ean", None, "keyword", False, True, False, False),
    }
    attrs = by_column(inference)
    assert attrs["name"].weight == 3.0 and attrs["winery"].weight == 2.0 and attrs["colour"].weight == 1.5
    assert attrs["winery"].sources == ["winery"] and attrs["country"].source is None
    why = {c.column: c.why for c in inference.columns}
    assert "id" in why["sku"] and "winery" in why["winery"] and "code" in why["ean"]
    assert "10 values" in why["vintage"]


def test_the_inferred_configuration_maps_every_wine_without_a_bad_row() -> None:
    frame, _ = read_csv(wine_csv())
    config = infer_attributes(frame).configuration
    products, bad = map_catalog(frame, config)
    assert bad == [] and products.height == 30
    first = products.row(0, named=True)
    assert first["id"] == "W-1000" and first["brand"] == "Bodegas Altos" and first["organic"] is True
    assert first["category"] == "Wine > Red > Rioja" and first["vintage"] == 2012
    assert first["ean"].startswith("0")  # a code keeps its leading zero


def test_a_parquet_bookshop_with_typed_columns() -> None:
    frame, _ = read_catalog(books_parquet(), "parquet")
    inference = infer_attributes(frame)
    assert inference.configuration.id_source == "isbn"
    got = {column: summary(a) for column, a in by_column(inference).items()}
    assert got["title"] == ("title", "title", "text", True, False, False, False)
    assert got["publisher"] == ("brand", "brand", "keyword", True, True, True, False)
    assert got["genre"] == ("category", "category", "keyword", True, True, True, False)
    assert got["price"][1:3] == ("price", "number")
    assert got["pages"] == ("pages", None, "integer", False, True, False, True)  # 24 values: no facet
    assert got["in_stock"] == ("in_stock", None, "boolean", False, True, True, False)
    assert got["cover"][:3] == ("image", "image", "keyword")  # recognised from its links
    assert got["author"] == ("author", None, "keyword", True, True, False, False)  # too many for a facet
    assert got["language"][3:6] == (True, True, True)
    products, bad = map_catalog(frame, inference.configuration)
    assert bad == [] and products.height == 24 and products["in_stock"].sum() == 18


def test_overrides_name_the_id_and_title() -> None:
    frame, _ = read_csv(wine_csv())
    inference = infer_attributes(frame, id_column="ean", title_column="description")
    assert inference.configuration.id_source == "ean"
    attrs = by_column(inference)
    assert attrs["description"].name == "title" and attrs["description"].searchable
    assert "sku" in attrs and "name" in attrs  # the former id and title stay, as plain fields
    assert "--title-column" in next(c.why for c in inference.columns if c.column == "description")


@pytest.mark.parametrize(
    ("csv", "kwargs", "code"),
    [
        (b"name,price\nRed wine,10\nWhite wine,12\n", {}, "catalog_id_missing"),
        (b"sku,name\nA,Red\nA,White\n", {}, "catalog_id_missing"),  # repeated: not an id
        (b"sku,price\nA,1\nB,2\n", {}, "catalog_title_missing"),
        (b"sku,name\nA,Red\n", {"id_column": "code"}, "catalog_id_missing"),
        (b"sku,name\nA,Red\n", {"title_column": "label"}, "catalog_title_missing"),
        (b"sku,name\n", {}, "catalog_empty"),
    ],
)
def test_what_cannot_be_inferred_is_named(csv: bytes, kwargs: dict[str, str], code: str) -> None:
    frame, _ = read_csv(csv)
    with pytest.raises(BadRequest) as caught:
        infer_attributes(frame, **kwargs)
    assert caught.value.code == code and caught.value.status == 400


def test_column_names_become_valid_attribute_names_without_clashes() -> None:
    frame = pl.DataFrame(
        {
            "product_id": ["1", "2", "3", "4"],
            "Product Name": ["Big red ball", "Small blue cube", "Tall green cone", "Wide grey box"],
            "Unit Price (EUR)": ["1.5", "2", "3.25", "4"],
            "2nd colour": ["Red", "Blue", "Red", "Blue"],
            "id": ["x", "x", "y", "y"],  # repeated: not the product id
            "currency": ["EUR"] * 4,
        }
    )
    inference = infer_attributes(frame.with_row_index("_line", 2))
    names = {c.column: c.attribute.name for c in inference.columns if c.attribute is not None}
    assert names["Product Name"] == "title" and names["Unit Price (EUR)"] == "price"
    assert names["2nd colour"] == "color"
    assert inference.configuration.id_source == "product_id"
    assert names["id"] == "id_2"  # "id" names the product id
    assert inference.currency == "EUR"
    AttributeConfiguration.model_validate(inference.configuration.model_dump())


values = st.one_of(
    st.none(),
    st.text(max_size=12),
    st.sampled_from(["1", "01", "2.5", "true", "no", "A > B", "https://x.io/a.jpg", "[1]", "nan", "1e999"]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.sampled_from(["id", "name", "Price", "colour", "x y", "", "_line2", "sku"]),
        min_size=1,
        max_size=5,
        unique=True,
    ),
    st.integers(min_value=0, max_value=6),
    st.data(),
)
def test_any_frame_either_infers_a_valid_configuration_or_says_why(
    columns: list[str], rows: int, data: st.DataObject
) -> None:
    frame = pl.DataFrame(
        {
            c: pl.Series(c, data.draw(st.lists(values, min_size=rows, max_size=rows)), dtype=pl.Utf8)
            for c in columns
        }
    ).with_row_index("_line", 2)
    try:
        inference = infer_attributes(frame)
    except BadRequest as exc:
        event("refused")
        assert exc.code in {"catalog_empty", "catalog_id_missing", "catalog_title_missing"}
    else:
        event("inferred")
        config = AttributeConfiguration.model_validate(inference.configuration.model_dump())
        assert {c.column for c in inference.columns} == set(columns)
        products, bad = map_catalog(frame, config)
        assert products.height + len(bad) == rows


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200), st.sampled_from(["csv", "jsonl", "parquet"]))
# bytes that start like a zstd or deflate stream: polars decompresses them and raised OSError (a 500)
@example(b"\x28\xb5\x2f\xfd", "csv")
@example(b"\x78\x9c\x00\x01garbage", "csv")
def test_any_bytes_are_read_or_refused_with_a_code(data: bytes, fmt: str) -> None:
    try:
        frame, _ = read_catalog(data, fmt)
        infer_attributes(frame)
    except AisleError as exc:
        assert exc.status == 400 and exc.code.startswith(("catalog_", "format_"))


def test_html_is_stripped_from_text_that_has_it_and_a_brand_of_many_values_is_still_a_facet() -> None:
    n = 300
    frame = pl.DataFrame(
        {
            "id": [str(i) for i in range(n)],
            "title": [f"Garden <b>hose</b> number {i}" for i in range(n)],
            "brand": [f"Maker {i % 150}" for i in range(n)],  # 150 brands: more than a plain facet takes
            "style": [f"Style {i % 150}" for i in range(n)],
            "description": [f"<p>A hose of {i} metres.</p>" for i in range(n)],
        }
    ).with_row_index("_line", 2)
    attrs = by_column(infer_attributes(frame))
    assert attrs["title"].html and attrs["description"].html
    assert attrs["brand"].facetable and not attrs["style"].facetable and attrs["style"].filterable
    products, _ = map_catalog(frame, infer_attributes(frame).configuration)
    assert products["title"][0] == "Garden hose number 0"
