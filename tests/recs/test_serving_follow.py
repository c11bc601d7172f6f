"""The predict engine following the catalog change log (issue 41): deletes, patches, new products, and
the tenant's stock policy with a request's storeId."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tests.recs.test_serving import PRODUCTS, SESSIONS, T, ids, query
from tests.support.recs import CooccurrenceRecommender, register_and_deploy, write_tenant

from aisle.catalog.changes import ChangeLog, Op
from aisle.core.events import open_event_store_url
from aisle.core.stock import StockConfig
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.core.tenant_config import GlobalConfiguration
from aisle.recs.containers import ContainerBody, ContainerStore
from aisle.recs.models.base import ModelType
from aisle.recs.serving import PredictAction, PredictEngine, PredictParams, RegistryModelSource
from aisle.recs.serving import tenants as tenant_cache

# "n1" is a product the model knows before the catalog does (written later through the API)
MODEL_SESSIONS = [*SESSIONS, ["p0", "n1"]]
Write = Callable[..., None]
SHOES = PredictAction.model_validate(
    {"type": "FILTER", "condition": {"op": "eq", "field": "category", "value": "shoes"}}
)


def make_engine(store: BlobStore, tmp_path: Path, stock: StockConfig | None = None) -> PredictEngine:
    write_tenant(store, T, PRODUCTS)
    if stock is not None:
        Tenants(store).write_config(T, {"global_configuration.json": GlobalConfiguration(stock=stock)})
    register_and_deploy(store, T, "m1", ModelType.CUSTOMERS_ALSO_VIEW)
    rule = {"type": "BOOST", "weight": 5, "condition": {"op": "in", "field": "id", "value": ["p3"]}}
    ContainerStore(Tenants(store).scope(T)).create("c1", ContainerBody.model_validate({
        "slotConfigurations": [{"slotConfigId": "main", "modelId": "m1", "itemCount": 4}],
        "recommendationRules": [rule]}))  # fmt: skip
    return engine_of(store, tmp_path)


def engine_of(store: BlobStore, tmp_path: Path) -> PredictEngine:
    model = CooccurrenceRecommender(MODEL_SESSIONS)
    events = open_event_store_url(f"sqlite://{tmp_path / 'events.sqlite3'}")
    return PredictEngine(Tenants(store), events, RegistryModelSource(lambda scope, record: model))


@pytest.fixture
def write(blob_store: BlobStore) -> Write:
    """Appends one change-log entry to the tenant's log, as the product API does."""
    log = ChangeLog(Tenants(blob_store).scope(T))

    def append(*ops: Op) -> None:
        assert log.create(log.head() + 1, list(ops))

    return append


def op(kind: str, pid: str, **fields: object) -> Op:
    return Op(kind, pid, 1, dict(fields))  # type: ignore[arg-type]


def follow(engine: PredictEngine) -> None:
    """One round of the predict service's follower thread (the table loaded first, as a request does)."""
    engine.tenant_cache.table(*engine.tenant_cache.get(T))
    assert engine.tenant_cache.follow(T) == ChangeLog(engine.tenant_cache.get(T)[1].scope).head()


def test_a_deleted_product_is_never_recommended_and_a_rule_naming_it_stays_valid(
    blob_store: BlobStore, tmp_path: Path, write: Write
) -> None:
    engine = make_engine(blob_store, tmp_path)
    assert ids(engine.predict(T, query())) == ["p3", "p1", "p2", "p4"]  # the saved rule lifts p3
    write(op("delete", "p3"), op("delete", "p1"))
    follow(engine)
    items = ids(engine.predict(T, query()))
    assert len(items) == 4 and not {"p1", "p3"} & set(items)
    # backfill from the catalog skips them too
    assert ids(engine.predict(T, query(seeds=["p9"], actions=[SHOES]))) == ["p0", "p2"]


def test_the_table_follows_at_the_catalog_check_without_the_thread(
    blob_store: BlobStore, tmp_path: Path, write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = make_engine(blob_store, tmp_path)
    assert "p1" in ids(engine.predict(T, query()))
    write(op("delete", "p1"))
    monkeypatch.setattr(tenant_cache, "CATALOG_TTL_S", 0.0)
    assert "p1" not in ids(engine.predict(T, query()))


def test_a_patch_takes_effect_in_filters_and_returned_fields(
    blob_store: BlobStore, tmp_path: Path, write: Write
) -> None:
    engine = make_engine(blob_store, tmp_path)
    cheap = PredictAction.model_validate(
        {"type": "FILTER", "condition": {"op": "lte", "field": "price", "value": 25}}
    )
    strict = PredictParams(strict_filtering=True, return_product=True)
    assert ids(engine.predict(T, query(actions=[cheap], params=strict))) == ["p1"]
    write(op("patch", "p2", price=15.0, title="Cheaper"), op("patch", "p1", price=99.0))
    follow(engine)
    items = engine.predict(T, query(actions=[cheap], params=strict))
    assert [(i.id, i.name, i.price) for i in items] == [("p2", "Cheaper", 15.0)]


def test_a_product_created_by_the_api_is_known(blob_store: BlobStore, tmp_path: Path, write: Write) -> None:
    engine = make_engine(blob_store, tmp_path)
    hats = PredictAction.model_validate(
        {"type": "FILTER", "condition": {"op": "eq", "field": "category", "value": "hats"}}
    )
    strict = PredictParams(strict_filtering=True, return_product=True)
    assert ids(engine.predict(T, query(actions=[hats], params=strict))) == []  # n1 unknown: filtered out
    write(op("upsert", "n1", title="New hat", price=12.0, category="hats", brand="puma"))
    follow(engine)
    items = engine.predict(T, query(actions=[hats], params=strict))
    assert [(i.id, i.name, i.price) for i in items] == [("n1", "New hat", 12.0)]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [("show", ["p3", "p1", "p2"]), ("hide", ["p1", "p2"]), ("bury", ["p1", "p2", "p3"])],
)
def test_stock_policy_shows_hides_or_buries_out_of_stock(
    blob_store: BlobStore, tmp_path: Path, write: Write, policy: str, expected: list[str]
) -> None:
    engine = make_engine(blob_store, tmp_path, StockConfig(policy=policy))  # type: ignore[arg-type]
    # p3 is lifted by the container's saved rule: bury puts it after every product in stock anyway
    write(op("patch", "p3", availability="OUT_OF_STOCK"), op("patch", "p2", availability="IN_STOCK"))
    follow(engine)
    strict = PredictParams(strict_filtering=True)
    assert ids(engine.predict(T, query(actions=[SHOES], params=strict))) == expected
    assert ids(engine.predict(T, query(actions=[SHOES], params=strict, store_id=None))) == expected


def test_hide_skips_out_of_stock_in_the_model_list_and_backfill(
    blob_store: BlobStore, tmp_path: Path, write: Write
) -> None:
    engine = make_engine(blob_store, tmp_path, StockConfig(policy="hide"))  # type: ignore[arg-type]
    write(op("patch", "p1", availability="OUT_OF_STOCK"), op("patch", "p0", availability="OUT_OF_STOCK"))
    follow(engine)
    assert ids(engine.predict(T, query())) == ["p3", "p2", "p4", "n1"]
    # backfilled from the catalog's shoes, p0 and p1 hidden (the saved rule lifts p3)
    assert ids(engine.predict(T, query(seeds=["p9"], actions=[SHOES]))) == ["p3", "p2"]


def test_store_id_filters_or_boosts_by_that_stores_inventory(
    blob_store: BlobStore, tmp_path: Path, write: Write
) -> None:
    in_stock = {"availability": "IN_STOCK", "quantity": 2}
    engine = make_engine(blob_store, tmp_path)
    write(
        op("patch", "p4", inventories={"s1": in_stock}),
        op("patch", "p5", inventories={"s1": in_stock, "s2": in_stock}),
        op("patch", "p2", inventories={"s2": in_stock}),
    )
    follow(engine)
    strict = PredictParams(strict_filtering=True)
    assert ids(engine.predict(T, query(store_id="s1", params=strict))) == ["p4", "p5"]
    assert ids(engine.predict(T, query(store_id="s2", params=strict))) == ["p2", "p5"]
    Tenants(blob_store).write_config(
        T, {"global_configuration.json": GlobalConfiguration(stock=StockConfig(store="boost"))}
    )
    boosting = engine_of(blob_store, tmp_path)
    follow(boosting)
    assert ids(boosting.predict(T, query(store_id="s1"))) == ["p4", "p5", "p3", "p1"]
    assert ids(boosting.predict(T, query())) == ["p3", "p1", "p2", "p4"]
