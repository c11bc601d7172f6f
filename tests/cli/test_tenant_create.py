"""``aisle tenant create NAME --catalog FILE`` on a wine shop's CSV no demo uses: inferred, imported,
indexed and searchable in one command."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.catalog_files import books_parquet, wine_csv
from typer.testing import CliRunner

from aisle.cli import app, register_commands
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.search.engine import SearchEngine
from aisle.search.query import SearchQuery

register_commands()
runner = CliRunner()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "AISLE_STORAGE_URL": f"file://{tmp_path / 'bucket'}",
        "AISLE_DATA_DIR": str(tmp_path / "data"),
        "AISLE_REDIS_URL": "",
    }


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_one_command_brings_a_wine_csv_online(tmp_path: Path, env: dict[str, str]) -> None:
    catalog = tmp_path / "wines.csv"
    catalog.write_bytes(wine_csv())
    result = runner.invoke(app, ["tenant", "create", "wines", "--catalog", str(catalog)], env=env)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == [
        "column",
        "attribute",
        "type",
        "role",
        "search",
        "filter",
        "facet",
        "sort",
        "why",
    ]
    rows = {line.split()[0]: line for line in lines[1:13]}
    assert rows["sku"].split()[1:3] == ["(id)", "id"]
    assert rows["winery"].split()[1:9] == ["brand", "keyword", "brand", "x2", "yes", "yes", "brand:", "named"]
    assert rows["price"].split()[1:7] == ["price", "number", "price", "yes", "yes", "yes"]
    assert rows["category"].split()[1:4] == ["category", "category_path", "category"]
    assert "wines: created, 30 products imported" in result.stdout and "it searches now" in result.stdout

    store = open_blob_store(env["AISLE_STORAGE_URL"])
    tenants = Tenants(store, ttl=0)
    assert tenants.names() == ["wines"]
    engine = SearchEngine.from_settings(_settings(env), store, tenants=tenants)
    found = engine.search(
        "wines", SearchQuery(text="riesling spatlese", facets=["brand", "color", "organic"])
    )
    assert [p["id"] for p in found.products][:1] == ["W-1007"]
    everything = engine.search("wines", SearchQuery(text="", facets=["brand", "country"]))
    assert everything.total == 30
    assert sum(v.count for v in everything.facets["brand"]) == 30 and len(everything.facets["country"]) == 6


def _settings(env: dict[str, str]):  # type: ignore[no-untyped-def]
    from aisle.core.config import Settings

    return Settings(
        storage_url=env["AISLE_STORAGE_URL"], data_dir=Path(env["AISLE_DATA_DIR"]), redis_url=None
    )


def test_a_dry_run_prints_the_inference_and_writes_nothing(tmp_path: Path, env: dict[str, str]) -> None:
    catalog = tmp_path / "books.parquet"
    catalog.write_bytes(books_parquet())
    args = ["tenant", "create", "books", "--catalog", str(catalog), "--dry-run"]
    result = runner.invoke(app, args, env=env)
    assert result.exit_code == 0, result.output
    assert "isbn" in result.stdout and "publisher" in result.stdout
    assert "books: dry run, nothing written; would create it with 24 products" in result.stdout
    assert files_under(tmp_path / "bucket") == [] and files_under(tmp_path / "data") == []


def test_an_existing_tenant_needs_replace_and_a_bad_file_writes_nothing(
    tmp_path: Path, env: dict[str, str]
) -> None:
    catalog = tmp_path / "wines.csv"
    catalog.write_bytes(wine_csv())
    create = ["tenant", "create", "wines", "--catalog", str(catalog)]
    assert runner.invoke(app, create, env=env).exit_code == 0
    again = runner.invoke(app, create, env=env)
    assert again.exit_code == 2 and "error [tenant_exists]" in again.stderr
    assert runner.invoke(app, [*create, "--replace"], env=env).exit_code == 0

    bad = tmp_path / "notes.csv"
    bad.write_text("note,mood\nhello,happy\nbye,sad\n")
    before = files_under(tmp_path / "bucket")
    refused = runner.invoke(app, ["tenant", "create", "notes", "--catalog", str(bad)], env=env)
    assert refused.exit_code == 2 and "error [catalog_id_missing]" in refused.stderr
    assert files_under(tmp_path / "bucket") == before
    named = runner.invoke(
        app,
        ["tenant", "create", "notes", "--catalog", str(bad), "--id-column", "note", "--title-column", "mood"],
        env=env,
    )
    assert named.exit_code == 0, named.output
    assert Tenants(open_blob_store(env["AISLE_STORAGE_URL"]), ttl=0).names() == ["notes", "wines"]
