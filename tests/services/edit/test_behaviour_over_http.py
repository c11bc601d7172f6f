"""A small SIMULATED run over HTTP: searches through the search service with a visitorId, clicks through
the edit service's ``POST /events`` with their attribution tokens and positions, the analytics service
moving the events into the log; the behaviour refresh then counts exactly those searches, clicks and
click positions."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import numpy as np
from fastapi.testclient import TestClient
from tests.services.edit.test_train_ranker_job import PRODUCTS, WORDS
from tests.support.recs import write_tenant

from aisle.analytics.log import ParquetLog
from aisle.behaviour.store import BehaviourStore, refresh
from aisle.core.config import Settings
from aisle.core.storage import open_blob_store
from aisle.core.tenant_config import Attribute
from aisle.demo.traffic import ClickModel
from aisle.services.analytics.app import create_app as analytics_app
from aisle.services.edit.app import create_app as edit_app
from aisle.services.search.app import create_app as search_app

SEARCHES = 300


def test_searches_and_clicks_over_http_are_what_the_refresh_counts(tmp_path: Path) -> None:
    settings = Settings(auth="off", storage_url=f"file://{tmp_path / 'bucket'}", data_dir=tmp_path / "data")
    store = open_blob_store(settings.storage_url)
    write_tenant(store, "shop", PRODUCTS, attributes=[Attribute(name="title", role="title", searchable=True)])
    model = ClickModel(eta=1.0, depth=5)  # SIMULATED shoppers: the wanted product ("-4") relevance 3
    rng = np.random.default_rng(11)
    weights = 1.0 / np.arange(1, len(WORDS) + 1) ** 1.07
    shown: Counter[tuple[str, str, int]] = Counter()
    clicked: Counter[tuple[str, str, int]] = Counter()
    queries: set[str] = set()
    with TestClient(search_app(settings)) as search, TestClient(edit_app(settings)) as edit:
        for n in range(SEARCHES):
            word = WORDS[int(rng.choice(len(WORDS), p=weights / weights.sum()))]
            visitor = f"sim-{n % 40}"
            resp = search.post(
                "/search", json={"query": word, "tenant": "shop", "size": 5, "visitorId": visitor}
            )
            assert resp.status_code == 200, resp.text
            body = resp.json()
            ids = [str(p["id"]) for p in body["products"]]
            assert len(ids) == 5
            query = body["queryGraph"]["normalized"]
            queries.add(query)
            events = []
            for k, product in enumerate(ids, 1):
                shown[(query, product, k)] += 1
                if rng.random() < model.click_probability(k, 3.0 if product.endswith("-4") else 1.0):
                    clicked[(query, product, k)] += 1
                    events.append(
                        {"visitorId": visitor, "eventType": "click", "productId": product,
                         "timestamp": time.time(), "eventId": f"{body['attributionToken']}-{k}",
                         "attributionToken": body["attributionToken"], "position": k}
                    )  # fmt: skip
            if events:
                sent = edit.post("/events", params={"tenant": "shop"}, json={"events": events})
                assert sent.status_code == 202 and sent.json()["accepted"] == len(events), sent.text
    # the search service stopped: its answers are written; the analytics service drains the events
    with TestClient(analytics_app(settings)):
        pass
    record = refresh(ParquetLog(store, tmp_path / "cache"), "shop")
    assert sum(clicked.values()) > 30  # enough clicks for the counts below to mean something
    assert (record.searches, record.clicks, record.queries) == (SEARCHES, sum(clicked.values()), len(queries))
    table = BehaviourStore(store).table("shop", "clicks").to_pylist()
    got_shown = {(r["query"], r["product_id"], r["position"]): r["impressions"] for r in table}
    got_clicked = {(r["query"], r["product_id"], r["position"]): r["clicks"] for r in table if r["clicks"]}
    assert got_shown == dict(shown)
    assert got_clicked == dict(clicked)
    by_position = Counter({k: 0 for k in range(1, 6)})
    for (_, _, k), c in clicked.items():
        by_position[k] += c
    table_by_position = Counter({k: 0 for k in range(1, 6)})
    for r in table:
        table_by_position[r["position"]] += r["clicks"]
    assert table_by_position == by_position and all(by_position[k] for k in range(1, 6))
