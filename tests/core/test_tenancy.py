"""Tenant configuration: the five files are required and validated, errors name tenant, file, field."""

from __future__ import annotations

import orjson
import pytest

from aisle.catalog.datasets import fashion
from aisle.core.errors import BadRequest, ConfigInvalid, TenantNotFound
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants, check_tenant_name


def make_tenant(store: BlobStore, name: str = "shop") -> Tenants:
    tenants = Tenants(store, ttl=0)
    tenants.write_config(name, fashion.configs())
    return tenants


def test_written_tenant_is_listed_and_loads(blob_store: BlobStore) -> None:
    tenants = make_tenant(blob_store)
    assert tenants.names() == ["shop"]
    config = tenants.config("shop")
    assert config.attributes.by_name("brand") is not None
    assert config.global_.currency == "INR"


def test_unknown_tenant(blob_store: BlobStore) -> None:
    with pytest.raises(TenantNotFound):
        Tenants(blob_store).config("ghost")


def test_missing_file_names_tenant_and_file(blob_store: BlobStore) -> None:
    tenants = make_tenant(blob_store)
    blob_store.delete("shop/crs_config.json")
    with pytest.raises(ConfigInvalid) as err:
        tenants.config("shop")
    assert err.value.file == "crs_config.json"
    assert "shop/crs_config.json" in err.value.message
    assert "missing" in err.value.message


def test_invalid_field_is_named(blob_store: BlobStore) -> None:
    tenants = make_tenant(blob_store)
    raw = orjson.loads(blob_store.get("shop/global_configuration.json"))
    raw["default_size"] = 500
    blob_store.put("shop/global_configuration.json", orjson.dumps(raw))
    with pytest.raises(ConfigInvalid) as err:
        tenants.config("shop")
    assert err.value.field == "default_size"


def test_invalid_json_is_reported(blob_store: BlobStore) -> None:
    tenants = make_tenant(blob_store)
    blob_store.put("shop/autocomplete_configuration.json", b"{not json")
    with pytest.raises(ConfigInvalid) as err:
        tenants.config("shop")
    assert "not valid JSON" in err.value.message


def test_attribute_rules_are_enforced() -> None:
    from pydantic import ValidationError

    from aisle.core.tenant_config import AttributeConfiguration

    with pytest.raises(ValidationError, match="role 'title'"):
        AttributeConfiguration(attributes=[{"name": "brand"}])
    with pytest.raises(ValidationError, match="only number, integer or keyword"):
        AttributeConfiguration(
            attributes=[{"name": "title", "type": "text", "role": "title", "sortable": True}]
        )


@pytest.mark.parametrize("name", ["", "UPPER", "../etc", "_auth", "a" * 65])
def test_bad_tenant_names(name: str) -> None:
    with pytest.raises(BadRequest):
        check_tenant_name(name)


def test_an_unchanged_configuration_is_kept_past_its_ttl(any_blob_store: BlobStore) -> None:
    tenants = make_tenant(any_blob_store)
    first = tenants.config("shop")
    assert tenants.config("shop") is first  # re-read (ttl 0), same bytes: the same object
    raw = orjson.loads(any_blob_store.get("shop/global_configuration.json"))
    raw["currency"] = "EUR"
    any_blob_store.put("shop/global_configuration.json", orjson.dumps(raw))
    changed = tenants.config("shop")
    assert changed is not first and changed.global_.currency == "EUR"
    assert changed.attributes == first.attributes
    any_blob_store.delete("shop/attribute_configuration.json")
    with pytest.raises(TenantNotFound):
        tenants.config("shop")


def test_a_change_within_the_ttl_shows_after_it(blob_store: BlobStore) -> None:
    tenants = Tenants(blob_store, ttl=3600)
    tenants.write_config("shop", fashion.configs())
    first = tenants.config("shop")
    usd = first.global_.model_copy(update={"currency": "USD"})
    Tenants(blob_store).write_config("shop", {"global_configuration.json": usd})
    assert tenants.config("shop") is first  # another process's write: held for the ttl
    tenants.ttl = 0
    assert tenants.config("shop").global_.currency == "USD"


def test_an_emptied_file_is_invalid_json_not_missing(blob_store: BlobStore) -> None:
    tenants = make_tenant(blob_store)
    tenants.config("shop")
    blob_store.put("shop/user_group_configuration.json", b"")
    with pytest.raises(ConfigInvalid) as err:
        tenants.config("shop")
    assert "not valid JSON" in err.value.message


@pytest.mark.parametrize("neighbours", [-1, 1001, 2.5, "many", None])
def test_a_bad_hybrid_neighbours_is_named(blob_store: BlobStore, neighbours: object) -> None:
    tenants = make_tenant(blob_store)
    raw = orjson.loads(blob_store.get("shop/global_configuration.json"))
    raw.setdefault("hybrid", {})["neighbours"] = neighbours
    blob_store.put("shop/global_configuration.json", orjson.dumps(raw))
    with pytest.raises(ConfigInvalid) as err:
        tenants.config("shop")
    assert err.value.field == "hybrid.neighbours"
    raw["hybrid"]["neighbours"] = 0  # the bounds: 0 (no nearest-neighbour search) .. 1000
    blob_store.put("shop/global_configuration.json", orjson.dumps(raw))
    assert tenants.config("shop").global_.hybrid.neighbours == 0
