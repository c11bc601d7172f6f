"""The demo's external search: Home Depot hardware in a local Typesense server, fashion falling back."""

from __future__ import annotations

from pathlib import Path

from tests.support.external import require_typesense

from aisle.catalog.datasets import fashion
from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.demo.external import COLLECTION, build_demo_external, start_demo_typesense
from aisle.demo.typesense_server import free_port
from aisle.search.external.protocol import ExternalSearchRequest
from aisle.search.external.resolver import open_external_search


def test_demo_loads_hardware_and_points_fashion_at_it(tmp_path: Path, shared_data: Path) -> None:
    require_typesense()
    settings = Settings(
        storage_url=f"file://{tmp_path / 'bucket'}", data_dir=tmp_path / "data", typesense_port=free_port()
    )
    tenants = Tenants(open_blob_store(settings.storage_url), ttl=0)
    said: list[str] = []
    build_demo_external(settings, tenants, shared_data, said.append)
    assert said == ["external search: skipped, needs the fashion tenant and the Home Depot catalog"]
    tenants.write_config("fashion", fashion.configs())
    build_demo_external(settings, tenants, shared_data, said.append)
    assert "5000 Home Depot products" in said[1]
    crs = tenants.config("fashion").crs
    assert crs.active and crs.fallback.when == ["no_results"] and crs.fallback.merge == "replace"
    key_file = Path(crs.backend.api_key.file or "")  # type: ignore[union-attr]
    assert key_file.stat().st_mode & 0o077 == 0  # the key is the owner's only, and not in the JSON
    assert key_file.read_text() not in (tmp_path / "bucket" / "fashion" / "crs_config.json").read_text()

    server = start_demo_typesense(settings)  # what `aisle serve` does: the same data, the served port
    assert server is not None
    try:
        backend = open_external_search(crs)
        result = backend.search(ExternalSearchRequest(query="plywood", size=3))
        assert result.total > 0 and all(p.id.startswith("hd-") for p in result.products)
        assert all("plywood" in (p.fields or {}).get("title", "").lower() for p in result.products)
        backend.close()
    finally:
        server.stop()
    build_demo_external(settings, tenants, shared_data, said.append)  # a second run reuses the collection
    assert not any(COLLECTION in s and "products" in s for s in said[3:])
