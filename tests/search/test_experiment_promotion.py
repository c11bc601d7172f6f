"""Search's part of experiments: a variant's search changes checked against the tenant (its rules, ranker
versions and settings), and made the live setting on promotion."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from tests.support.recs import write_tenant

from aisle.core.storage import open_blob_store
from aisle.core.tenancy import Tenants
from aisle.experiments.admin import Refusal
from aisle.experiments.model import Changes
from aisle.search.experiment_promotion import SearchPromotion
from aisle.search.ranking.store import RankerRecord, RankerStore
from aisle.search.rules.model import RuleBody
from aisle.search.rules.store import RuleStore

PRODUCTS = pl.DataFrame({"id": ["p0", "p1"], "title": ["Red shoe", "Blue bag"]})


def hide(name: str, enabled: bool) -> RuleBody:
    return RuleBody.model_validate(
        {
            "name": name,
            "enabled": enabled,
            "conditions": {"query": {"match": "contains", "value": "shoes"}},
            "actions": [{"type": "hide", "productIds": ["p0"]}],
        }
    )


@pytest.fixture
def shop(tmp_path: Path) -> tuple[Tenants, RankerStore, SearchPromotion]:
    store = open_blob_store(f"file://{tmp_path / 'bucket'}")
    write_tenant(store, "shop", PRODUCTS)
    tenants = Tenants(store, ttl=0)
    rules = RuleStore(tenants.scope("shop"))
    rules.create(hide("on", True), "on")
    rules.create(hide("off", False), "off")
    rankers = RankerStore(store, check_every=0)
    rankers.save("shop", "a model", RankerRecord(version=0, features=["bm25"], queries=1, candidates=1))
    return tenants, rankers, SearchPromotion(tenants, rankers)


def changes(**fields: object) -> Changes:
    return Changes.model_validate(fields)


def test_a_change_the_tenant_cannot_serve_is_refused(
    shop: tuple[Tenants, RankerStore, SearchPromotion],
) -> None:
    _, _, search = shop
    assert search.check("shop", changes(rulesOff=["on"], rulesOn=["off"], ranker=1)) is None
    assert search.check("shop", changes(ranker="none", hybrid={"blendWeight": 0.5})) is None
    assert search.check("shop", changes(rulesOff=["on", "zz", "aa"])) == Refusal(
        "no rule aa, zz in tenant 'shop'", {"rules": ["aa", "zz"]}
    )
    assert search.check("shop", changes(ranker=2)) == Refusal(
        "tenant 'shop' has no ranker version 2", {"ranker": 2}
    )
    refused = search.check("shop", changes(settings={"default_size": 0}))
    assert refused is not None and refused.details == {"field": "default_size"}
    assert refused.message.startswith("setting 'default_size': ")


def test_promoting_makes_rules_settings_and_ranker_live(
    shop: tuple[Tenants, RankerStore, SearchPromotion],
) -> None:
    tenants, rankers, search = shop
    rankers.use("shop", None)
    search.apply(
        "shop", changes(rulesOff=["on"], rulesOn=["off"], ranker=1, settings={"stages": {"min_hits": 7}})
    )
    rules = {r.id: r for r in RuleStore(tenants.scope("shop")).list()}
    assert (rules["on"].enabled, rules["on"].version) == (False, 2)
    assert (rules["off"].enabled, rules["off"].version) == (True, 2)
    config = tenants.config("shop").global_
    assert config.stages.min_hits == 7 and config.ranking.enabled
    assert rankers.in_use("shop") == 1
    search.apply("shop", changes(ranker="none"))
    assert rankers.in_use("shop") is None
    assert tenants.config("shop").global_.ranking == config.ranking  # the ranker off, not the ranking
