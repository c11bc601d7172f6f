"""A tenant from one catalog file (:func:`create_tenant`): written whole or not at all."""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl
import pytest
from tests.support.catalog_files import wine_csv, wine_ndjson, wine_rows

from aisle.catalog.onboarding import catalog_format, create_tenant
from aisle.catalog.store import CatalogStore
from aisle.core.errors import AisleError
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants


def nested_parquet() -> bytes:
    buf = io.BytesIO()
    pl.DataFrame({"sku": ["A", "B"], "name": ["Red", "White"], "tags": [["x"], ["y", "z"]]}).write_parquet(
        buf
    )
    return buf.getvalue()


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_a_wine_file_becomes_a_tenant_with_its_catalog(blob_store: BlobStore) -> None:
    tenants = Tenants(blob_store, ttl=0)
    created = create_tenant(tenants, "wines", wine_ndjson(), "jsonl", source="wines.ndjson")
    assert created.imported == 30 and created.bad_rows == [] and not created.replaced
    assert tenants.names() == ["wines"]
    config = tenants.config("wines")
    assert config.attributes.id_source == "sku" and config.global_.display_name == "wines"
    catalog = CatalogStore(tenants.scope("wines")).load()
    assert catalog.version == created.version and catalog.count == 30
    assert set(catalog.products["color"].unique()) == {"Red", "White", "Rose"}


def test_bad_rows_are_skipped_and_reported_with_their_lines(blob_store: BlobStore) -> None:
    rows = wine_rows()
    rows[3]["price"] = "twelve"  # a number column with one word in it is still a price...
    rows[5]["sku"] = ""  # ...and a row without an id is skipped
    created = create_tenant(Tenants(blob_store, ttl=0), "wines", wine_csv(rows), "csv")
    assert created.imported == 28 and created.inference.configuration.id_source == "sku"
    assert [(b.line, b.reason) for b in created.bad_rows] == [
        (5, "field 'price' is not a number"),
        (7, "missing id"),
    ]


def test_an_existing_tenant_is_refused_unless_replaced(blob_store: BlobStore) -> None:
    tenants = Tenants(blob_store, ttl=0)
    first = create_tenant(tenants, "wines", wine_csv(), "csv")
    with pytest.raises(AisleError) as caught:
        create_tenant(tenants, "wines", wine_csv(wine_rows()[:10]), "csv")
    assert (caught.value.status, caught.value.code) == (409, "tenant_exists")
    assert CatalogStore(tenants.scope("wines")).load().count == 30  # untouched
    second = create_tenant(tenants, "wines", wine_csv(wine_rows()[:10]), "csv", replace=True)
    assert second.replaced and second.version != first.version
    assert CatalogStore(tenants.scope("wines")).load().count == 10


@pytest.mark.parametrize(
    ("data", "fmt", "code"),
    [
        (b"name,price\nRed,10\nWhite,11\n", "csv", "catalog_id_missing"),
        (b"sku,price\nA,10\n", "csv", "catalog_title_missing"),
        (b"", "csv", "catalog_empty"),
        (b"not parquet at all", "parquet", "catalog_file_invalid"),
        (b"\x1f\x8bbroken gzip", "csv", "catalog_file_invalid"),
        (b'{"sku": "A"}\n[1, 2]\n', "jsonl", "catalog_title_missing"),
        (b"_line,sku,name\n1,A,Red\n", "csv", "catalog_file_invalid"),  # the reader's own column name
        (nested_parquet(), "parquet", "catalog_file_invalid"),  # a list column has no text form
    ],
)
def test_a_bad_file_writes_nothing(
    blob_store: BlobStore, tmp_path: Path, data: bytes, fmt: str, code: str
) -> None:
    before = files_under(tmp_path / "bucket")
    with pytest.raises(AisleError) as caught:
        create_tenant(Tenants(blob_store, ttl=0), "wines", data, fmt)
    assert (caught.value.status, caught.value.code) == (400, code), caught.value.message
    assert files_under(tmp_path / "bucket") == before


def test_a_dry_run_writes_nothing(blob_store: BlobStore, tmp_path: Path) -> None:
    created = create_tenant(Tenants(blob_store, ttl=0), "wines", wine_csv(), "csv", dry_run=True)
    assert created.dry_run and created.imported == 30 and created.version is None
    assert files_under(tmp_path / "bucket") == []


def test_content_types_name_formats() -> None:
    assert catalog_format("text/csv; charset=utf-8") == "csv"
    assert catalog_format("application/x-ndjson") == "jsonl"
    assert catalog_format("application/vnd.apache.parquet") == "parquet"
    with pytest.raises(AisleError) as caught:
        catalog_format("application/json")
    assert (caught.value.status, caught.value.code) == (415, "unsupported_media_type")
