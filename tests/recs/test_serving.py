"""The predict engine end to end on real storage: containers, actions, backfill, personalisation."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from tests.support.recs import CooccurrenceRecommender, register_and_deploy, write_tenant

from aisle.core.errors import BadRequest
from aisle.core.events import Event, open_event_store_url
from aisle.core.storage import BlobStore
from aisle.core.tenancy import Tenants
from aisle.recs.containers import ContainerBody, ContainerStore
from aisle.recs.models.base import ModelType
from aisle.recs.serving import PredictAction, PredictEngine, PredictParams, PredictQuery, RegistryModelSource

T = "shop"
PRODUCTS = pl.DataFrame(
    {
        "id": [f"p{i}" for i in range(12)],
        "title": [f"Product {i}" for i in range(12)],
        "description": [f"About {i}" for i in range(12)],
        "price": [float(10 * (i + 1)) for i in range(12)],
        "brand": ["nike", "nike", "puma", "puma", "adidas", "adidas"] * 2,
        "category": ["shoes"] * 4 + ["bags"] * 4 + ["hats"] * 4,
    }
)
# p0 co-occurs most with p1, then p2, p3...; p11 and p10 only come with p9
SESSIONS = [
    ["p0", "p1"], ["p0", "p1"], ["p0", "p1"], ["p0", "p1"], ["p0", "p1"],
    ["p0", "p2"], ["p0", "p2"], ["p0", "p2"], ["p0", "p2"],
    ["p0", "p3"], ["p0", "p3"], ["p0", "p3"],
    ["p0", "p4"], ["p0", "p4"], ["p0", "p5"], ["p0", "p6"],
    ["p9", "p10"], ["p9", "p11"], ["p9", "p11"],
]  # fmt: skip


def query(**kw: object) -> PredictQuery:
    kw.setdefault("container_id", "c1")
    kw.setdefault("seeds", ["p0"])
    return PredictQuery(**kw)  # type: ignore[arg-type]


def ids(items: list) -> list[str]:
    return [i.id for i in items]


@pytest.fixture
def engine(blob_store: BlobStore, tmp_path: Path) -> PredictEngine:
    write_tenant(blob_store, T, PRODUCTS)
    for m in ("m1", "m2"):
        register_and_deploy(blob_store, T, m, ModelType.CUSTOMERS_ALSO_VIEW)
    containers = ContainerStore(Tenants(blob_store).scope(T))
    containers.create("c1", ContainerBody.model_validate({"slotConfigurations": [
        {"slotConfigId": "main", "modelId": "m1", "itemCount": 4}]}))  # fmt: skip
    containers.create("two", ContainerBody.model_validate({"slotConfigurations": [
        {"slotConfigId": "a", "modelId": "m1", "itemCount": 2, "placement": 0},
        {"slotConfigId": "b", "modelId": "m2", "itemCount": 2, "placement": 1}]}))  # fmt: skip
    model = CooccurrenceRecommender(SESSIONS)
    source = RegistryModelSource(lambda scope, record: model)
    events = open_event_store_url(f"sqlite://{tmp_path / 'events.sqlite3'}")
    return PredictEngine(Tenants(blob_store), events, source)


def test_container_routes_to_its_model(engine: PredictEngine) -> None:
    items = engine.predict(T, query())
    assert ids(items) == ["p1", "p2", "p3", "p4"]
    assert items[0].score == 1.0 and items[0].name is None


def test_return_product_and_debug_explanation(engine: PredictEngine) -> None:
    params = PredictParams(return_product=True, debug=True)
    top = engine.predict(T, query(params=params))[0]
    assert (top.name, top.description, top.price) == ("Product 1", "About 1", 20.0)
    assert (
        top.explanation and top.explanation["modelId"] == "m1" and top.explanation["slotConfigId"] == "main"
    )


def test_strict_filter_returns_fewer_and_non_strict_backfills(engine: PredictEngine) -> None:
    only_shoes = PredictAction.model_validate(
        {"type": "FILTER", "condition": {"op": "eq", "field": "category", "value": "shoes"}}
    )
    strict = engine.predict(T, query(actions=[only_shoes], params=PredictParams(strict_filtering=True)))
    assert ids(strict) == ["p1", "p2", "p3"]
    loose = engine.predict(T, query(actions=[only_shoes], seeds=["p9"], params=PredictParams(debug=True)))
    # p9's neighbours are hats; the filter keeps none, so the list is backfilled with allowed shoes
    assert ids(loose) == ["p0", "p1", "p2", "p3"] and all(i.explanation["backfill"] for i in loose)


def test_boost_and_bury_reorder(engine: PredictEngine) -> None:
    boost = PredictAction.model_validate(
        {"type": "BOOST", "weight": 2, "condition": {"op": "eq", "field": "brand", "value": "adidas"}}
    )
    assert ids(engine.predict(T, query(actions=[boost])))[0] == "p4"
    bury = PredictAction.model_validate(
        {"type": "BURY", "weight": 5, "condition": {"op": "in", "field": "id", "value": ["p1"]}}
    )
    assert "p1" not in ids(engine.predict(T, query(actions=[bury])))[:3]


def test_slot_scoped_action_and_unknown_slot(engine: PredictEngine) -> None:
    bury_a = PredictAction.model_validate({"type": "FILTER", "slotConfigId": "a",
        "condition": {"op": "eq", "field": "brand", "value": "puma"}})  # fmt: skip
    items = engine.predict(T, query(container_id="two", actions=[bury_a], params=PredictParams(debug=True)))
    slots = [(i.id, i.explanation["slotConfigId"]) for i in items]
    assert slots == [("p2", "a"), ("p3", "a"), ("p1", "b"), ("p4", "b")]
    with pytest.raises(BadRequest) as err:
        engine.predict(T, query(actions=[PredictAction(type="BOOST", slotConfigId="zz")]))
    assert err.value.code == "action_slot_unknown"


def test_model_ids_restrict_and_unknown_is_400(engine: PredictEngine) -> None:
    items = engine.predict(T, query(container_id="two", model_ids=["m2"], params=PredictParams(debug=True)))
    assert {i.explanation["modelId"] for i in items} == {"m2"} and len(items) == 2
    with pytest.raises(BadRequest) as err:
        engine.predict(T, query(model_ids=["nope"]))
    assert err.value.code == "model_ids_unknown"


def test_visitor_session_changes_results_and_purchases_are_left_out(engine: PredictEngine) -> None:
    anonymous = ids(engine.predict(T, query()))
    engine.events.append(T, [Event("v1", "view", "p9", 1.0), Event("v1", "purchase", "p1", 2.0)])
    personal = ids(engine.predict(T, query(visitor_id="v1")))
    assert personal != anonymous and "p1" not in personal and "p11" in personal
    assert ids(engine.predict(T, query(visitor_id="someone-else"))) == anonymous


def test_user_brand_affinity_boosts_matching_brand(engine: PredictEngine) -> None:
    engine.events.put_user_features(T, "u1", {"brand_affinity": {"adidas": 1.0}})
    plain, personal = ids(engine.predict(T, query())), ids(engine.predict(T, query(user_id="u1")))
    # weight 0.3 of the normalised range: p4 (0.25 + 0.3) passes p3 (0.5), not p1 (1.0)
    assert plain == ["p1", "p2", "p3", "p4"] and personal == ["p1", "p2", "p4", "p3"]


def test_diversity_spreads_categories(engine: PredictEngine) -> None:
    plain = engine.predict(T, query())
    diverse = engine.predict(T, query(params=PredictParams(diversity_level="high")))
    cats = dict(zip(PRODUCTS["id"], PRODUCTS["category"], strict=True))
    assert len({cats[i.id] for i in diverse[:3]}) > len({cats[i.id] for i in plain[:3]}) == 1


def test_evaluation_names_one_model(engine: PredictEngine) -> None:
    out = engine.evaluate(T, query(), "CUSTOMERS_ALSO_VIEW", "m2")
    assert out["metrics"] == {"hr@20": 0.5} and [i.id for i in out["items"]][:2] == ["p1", "p2"]
    with pytest.raises(BadRequest):
        engine.evaluate(T, query(), "SIMILAR_ITEMS", "m2")


def test_deploy_demo_creates_the_demo_containers_idempotently(blob_store: BlobStore, tmp_path: Path) -> None:
    from aisle.core.config import Settings
    from aisle.demo.containers import DEMO_CONTAINERS, deploy_demo

    products = pl.DataFrame({"id": [str(i) for i in range(30)], "title": [f"t{i}" for i in range(30)],
                             "category": ["c"] * 30})  # fmt: skip
    records = {}
    for tenant, wanted in DEMO_CONTAINERS.items():
        write_tenant(blob_store, tenant, products)
        records[tenant] = [
            register_and_deploy(blob_store, tenant, f"{tenant}-{t.value.lower()}", t, deploy=False)
            for _, t in wanted
        ]
    loads: list[str] = []

    def loader(scope: object, record: object) -> CooccurrenceRecommender:
        loads.append(record.model_id)  # type: ignore[attr-defined]
        return CooccurrenceRecommender([["0", "1", "2"]], record.model_type)  # type: ignore[attr-defined]

    settings = Settings(auth="off", data_dir=tmp_path)
    lines: list[str] = []
    first = deploy_demo(blob_store, settings, records, loader=loader, progress=lines.append)
    assert {(c.tenant, c.container_id) for c in first} == {
        ("fashion", "similar-items"), ("fashion", "good-better-best"), ("default", "bought-together"),
        ("default", "bundles"), ("yoochoose", "also-viewed"),
    }  # fmt: skip
    assert len(loads) == 5
    again = deploy_demo(blob_store, settings, records, loader=loader, progress=lines.append)
    assert len(loads) == 5 and [c.version for c in again] == [1] * 5
    assert len(lines) == 10 and "already deployed" in lines[-1]
    engine = PredictEngine(
        Tenants(blob_store),
        open_event_store_url(f"sqlite://{tmp_path / 'e.sqlite3'}"),
        RegistryModelSource(loader),
    )
    for c in first:
        assert len(engine.predict(c.tenant, PredictQuery(container_id=c.container_id, seeds=["0"]))) == 20


def test_brand_affinity_falls_back_to_the_users_history(engine: PredictEngine) -> None:
    from aisle.behaviour.ingest import record_events

    record_events(engine.events, T, [Event("v7", "view", "p10", 1.0, user_id="u7")])  # p10 is adidas
    assert ids(engine.predict(T, query(user_id="u7"))) == ["p1", "p2", "p4", "p3"]
    assert engine.events.recent(T, "v7")[0].user_id == "u7"


def test_category_backfill_widens_to_parent_levels() -> None:
    from aisle.recs.serving.products import ProductTable

    frame = pl.DataFrame(
        {
            "id": ["a1", "a2", "b1", "b2", "x1"],
            "title": ["t"] * 5,
            "category": ["Food > Coffee > Decaf", "Food > Coffee > Decaf", "Food > Coffee > Beans",
                         "Food > Tea", "Garden"],
        }
    )  # fmt: skip
    table = ProductTable.from_frame("v1", frame)
    assert [table.ids[r] for r in table.same_category_rows([0])] == ["a2", "b1", "b2"]
