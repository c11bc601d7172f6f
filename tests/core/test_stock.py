"""The stock contract: availability values, per-store inventory, the tenant's policy (issue 41)."""

import pytest
from pydantic import ValidationError

from aisle.core.stock import Availability, StockPolicy, in_stock, stores_in_stock
from aisle.core.tenant_config import GlobalConfiguration


def test_a_product_without_availability_is_in_stock_and_out_of_stock_is_not():
    assert in_stock({})
    assert in_stock({"availability": "BACKORDER"}) and in_stock({"availability": "PREORDER"})
    assert not in_stock({"availability": "OUT_OF_STOCK"})


def test_a_store_judges_by_its_own_entry_only():
    product = {
        "availability": "IN_STOCK",
        "inventories": {
            "s1": {"availability": "IN_STOCK", "quantity": 3},
            "s2": {"availability": "OUT_OF_STOCK"},
        },
    }
    assert in_stock(product, "s1")
    assert not in_stock(product, "s2")
    assert not in_stock(product, "s3")  # a store that does not list it
    assert stores_in_stock(product) == ["s1"]
    assert stores_in_stock({"inventories": "nonsense"}) == []


def test_the_policy_defaults_to_show_and_rejects_unknown_values():
    assert GlobalConfiguration().stock.policy is StockPolicy.show
    assert GlobalConfiguration.model_validate({"stock": {"policy": "hide"}}).stock.policy is StockPolicy.hide
    with pytest.raises(ValidationError):
        GlobalConfiguration.model_validate({"stock": {"policy": "sometimes"}})
    assert {a.value for a in Availability} == {"IN_STOCK", "OUT_OF_STOCK", "PREORDER", "BACKORDER"}
